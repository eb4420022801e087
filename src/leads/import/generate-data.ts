/** Word lists of the synthetic lead generator: trades, places and name parts of US small businesses. */

export interface Trade {
  /** Words that end a company name ("Plumbing", "Plumbing & Drain"). */
  names: readonly string[];
  /** The listed category. */
  category: string;
  /** The schema.org type of its website, beside LocalBusiness. */
  schemaType: string;
  /** Category names an AI classification would give (1-3 are picked). */
  ai: readonly string[];
  naics: string;
  /** Has a price range ($-$$$$) like restaurants and salons. */
  priced?: boolean;
  /** What the business does, for descriptions. */
  does: string;
}

const t = (
  names: string[],
  category: string,
  schemaType: string,
  ai: string[],
  naics: string,
  does: string,
  priced = false,
): Trade => ({ names, category, schemaType, ai, naics, does, priced });

export const TRADES: readonly Trade[] = [
  t(
    ["Plumbing", "Plumbing & Drain", "Plumbers"],
    "Plumber",
    "Plumber",
    ["Plumbing", "Drain Cleaning", "Home Services"],
    "238220",
    "residential and commercial plumbing, water heaters and drain cleaning",
  ),
  t(
    ["Roofing", "Roofing & Exteriors", "Roofers"],
    "Roofing Contractor",
    "RoofingContractor",
    ["Roofing", "Home Improvement", "Storm Damage Repair"],
    "238160",
    "roof repair, replacement and storm damage inspections",
  ),
  t(
    ["Heating & Air", "HVAC", "Air Conditioning"],
    "HVAC Contractor",
    "HVACBusiness",
    ["HVAC", "Air Conditioning Repair", "Home Services"],
    "238220",
    "heating and air conditioning installation and repair",
  ),
  t(
    ["Landscaping", "Lawn Care", "Landscape Design"],
    "Landscaper",
    "HomeAndConstructionBusiness",
    ["Landscaping", "Lawn Care", "Outdoor Services"],
    "561730",
    "lawn care, landscape design and irrigation",
  ),
  t(
    ["Dental", "Family Dentistry", "Dental Care"],
    "Dentist",
    "Dentist",
    ["Dentistry", "Healthcare", "Cosmetic Dentistry"],
    "621210",
    "general, cosmetic and family dentistry",
  ),
  t(
    ["Auto Repair", "Automotive", "Auto Service"],
    "Auto Repair Shop",
    "AutoRepair",
    ["Auto Repair", "Automotive Services", "Car Maintenance"],
    "811111",
    "brakes, engine diagnostics and general auto repair",
  ),
  t(
    ["Bakery", "Bake Shop", "Baking Co."],
    "Bakery",
    "Bakery",
    ["Bakery", "Food & Beverage", "Desserts"],
    "311811",
    "fresh bread, pastries and custom cakes",
    true,
  ),
  t(
    ["Salon", "Hair Studio", "Beauty Bar"],
    "Hair Salon",
    "HairSalon",
    ["Hair Salon", "Beauty", "Personal Care"],
    "812112",
    "haircuts, color and styling",
    true,
  ),
  t(
    ["Law Firm", "Law Group", "Legal"],
    "Law Firm",
    "LegalService",
    ["Legal Services", "Law Firm", "Personal Injury Law"],
    "541110",
    "personal injury, family and estate law",
  ),
  t(
    ["Electric", "Electrical Services", "Electricians"],
    "Electrician",
    "Electrician",
    ["Electrical Contractor", "Home Services", "Lighting"],
    "238210",
    "electrical repairs, panel upgrades and lighting",
  ),
  t(
    ["Painting", "Painters", "Painting Co."],
    "Painting Contractor",
    "HousePainter",
    ["Painting", "Home Improvement", "Commercial Painting"],
    "238320",
    "interior and exterior painting",
  ),
  t(
    ["Pest Control", "Exterminators", "Termite & Pest"],
    "Pest Control Service",
    "HomeAndConstructionBusiness",
    ["Pest Control", "Home Services", "Termite Control"],
    "561710",
    "termite, rodent and general pest control",
  ),
  t(
    ["Cleaning", "Cleaning Services", "Maids"],
    "House Cleaning Service",
    "HomeAndConstructionBusiness",
    ["Cleaning Services", "Home Services", "Janitorial"],
    "561720",
    "residential and commercial cleaning",
  ),
  t(
    ["Chiropractic", "Chiropractic Center", "Spine & Wellness"],
    "Chiropractor",
    "Physician",
    ["Chiropractic", "Healthcare", "Wellness"],
    "621310",
    "chiropractic adjustments and sports injury care",
  ),
  t(
    ["Veterinary Clinic", "Animal Hospital", "Pet Clinic"],
    "Veterinarian",
    "VeterinaryCare",
    ["Veterinary", "Pet Care", "Animal Health"],
    "541940",
    "wellness exams, vaccinations and pet surgery",
  ),
  t(
    ["Fitness", "Gym", "CrossFit"],
    "Gym",
    "ExerciseGym",
    ["Fitness", "Gym", "Personal Training"],
    "713940",
    "group classes and personal training",
    true,
  ),
  t(
    ["Yoga Studio", "Yoga", "Pilates & Yoga"],
    "Yoga Studio",
    "SportsActivityLocation",
    ["Yoga", "Fitness", "Wellness"],
    "713940",
    "yoga and pilates classes",
    true,
  ),
  t(
    ["Accounting", "CPA", "Tax Services"],
    "Accountant",
    "AccountingService",
    ["Accounting", "Tax Preparation", "Bookkeeping"],
    "541211",
    "tax preparation, bookkeeping and payroll",
  ),
  t(
    ["Insurance", "Insurance Agency", "Insurance Group"],
    "Insurance Agency",
    "InsuranceAgency",
    ["Insurance", "Financial Services"],
    "524210",
    "home, auto and business insurance",
  ),
  t(
    ["Realty", "Real Estate", "Properties"],
    "Real Estate Agency",
    "RealEstateAgent",
    ["Real Estate", "Property Management"],
    "531210",
    "home buying, selling and property management",
  ),
  t(
    ["Coffee", "Coffee House", "Roasters"],
    "Coffee Shop",
    "CafeOrCoffeeShop",
    ["Coffee Shop", "Food & Beverage", "Cafe"],
    "722515",
    "specialty coffee and breakfast",
    true,
  ),
  t(
    ["Pizza", "Pizzeria", "Pizza Kitchen"],
    "Pizza Restaurant",
    "Restaurant",
    ["Restaurant", "Pizza", "Food & Beverage"],
    "722511",
    "wood-fired pizza, delivery and catering",
    true,
  ),
  t(
    ["Tacos", "Taqueria", "Mexican Grill"],
    "Mexican Restaurant",
    "Restaurant",
    ["Restaurant", "Mexican Food", "Food & Beverage"],
    "722511",
    "tacos, burritos and catering",
    true,
  ),
  t(
    ["BBQ", "Smokehouse", "Barbecue"],
    "Barbecue Restaurant",
    "Restaurant",
    ["Restaurant", "Barbecue", "Catering"],
    "722511",
    "smoked brisket, ribs and catering",
    true,
  ),
  t(
    ["Florist", "Flowers", "Floral Design"],
    "Florist",
    "Florist",
    ["Florist", "Gifts", "Event Services"],
    "453110",
    "flower arrangements, weddings and same-day delivery",
    true,
  ),
  t(
    ["Photography", "Photo Studio", "Photography Co."],
    "Photographer",
    "ProfessionalService",
    ["Photography", "Event Services", "Creative Services"],
    "541921",
    "wedding, portrait and commercial photography",
  ),
  t(
    ["Construction", "Builders", "General Contracting"],
    "General Contractor",
    "GeneralContractor",
    ["Construction", "General Contractor", "Remodeling"],
    "236118",
    "home building, additions and remodeling",
  ),
  t(
    ["Remodeling", "Kitchen & Bath", "Renovations"],
    "Remodeler",
    "HomeAndConstructionBusiness",
    ["Remodeling", "Home Improvement", "Kitchen Remodeling"],
    "236118",
    "kitchen and bathroom remodeling",
  ),
  t(
    ["Flooring", "Floors", "Tile & Flooring"],
    "Flooring Contractor",
    "HomeAndConstructionBusiness",
    ["Flooring", "Home Improvement", "Tile Installation"],
    "238330",
    "hardwood, tile and vinyl flooring",
  ),
  t(
    ["Pools", "Pool Service", "Pool & Spa"],
    "Swimming Pool Contractor",
    "HomeAndConstructionBusiness",
    ["Pool Services", "Home Services", "Outdoor Services"],
    "238990",
    "pool building, cleaning and repair",
  ),
  t(
    ["Tree Service", "Tree Care", "Arborists"],
    "Tree Service",
    "HomeAndConstructionBusiness",
    ["Tree Service", "Landscaping", "Outdoor Services"],
    "561730",
    "tree trimming, removal and stump grinding",
  ),
  t(
    ["Moving", "Movers", "Moving & Storage"],
    "Moving Company",
    "MovingCompany",
    ["Moving Services", "Storage", "Logistics"],
    "484210",
    "local and long-distance moving",
  ),
  t(
    ["Locksmith", "Lock & Key", "Security Locksmith"],
    "Locksmith",
    "Locksmith",
    ["Locksmith", "Security", "Home Services"],
    "561622",
    "lockouts, rekeying and smart locks",
  ),
  t(
    ["Garage Doors", "Garage Door Repair", "Overhead Door"],
    "Garage Door Supplier",
    "HomeAndConstructionBusiness",
    ["Garage Doors", "Home Services"],
    "238290",
    "garage door installation and repair",
  ),
  t(
    ["Solar", "Solar Energy", "Solar Solutions"],
    "Solar Energy Contractor",
    "HomeAndConstructionBusiness",
    ["Solar Energy", "Renewable Energy", "Home Improvement"],
    "238220",
    "residential solar panels and batteries",
  ),
  t(
    ["Fencing", "Fence Co.", "Fence & Deck"],
    "Fence Contractor",
    "HomeAndConstructionBusiness",
    ["Fencing", "Home Improvement", "Outdoor Services"],
    "238990",
    "wood, vinyl and iron fences and decks",
  ),
  t(
    ["Concrete", "Concrete & Paving", "Masonry"],
    "Concrete Contractor",
    "HomeAndConstructionBusiness",
    ["Concrete", "Paving", "Construction"],
    "238110",
    "driveways, patios and foundations",
  ),
  t(
    ["Pet Grooming", "Dog Grooming", "Pet Spa"],
    "Pet Groomer",
    "PetStore",
    ["Pet Grooming", "Pet Care"],
    "812910",
    "dog and cat grooming and boarding",
    true,
  ),
  t(
    ["Daycare", "Learning Center", "Child Care"],
    "Child Care Agency",
    "ChildCare",
    ["Child Care", "Education", "Preschool"],
    "624410",
    "infant care, preschool and after-school programs",
  ),
  t(
    ["Tutoring", "Learning", "Academy"],
    "Tutoring Service",
    "EducationalOrganization",
    ["Tutoring", "Education", "Test Prep"],
    "611691",
    "K-12 tutoring and test preparation",
  ),
  t(
    ["Physical Therapy", "Rehab & Therapy", "PT"],
    "Physical Therapist",
    "MedicalClinic",
    ["Physical Therapy", "Healthcare", "Rehabilitation"],
    "621340",
    "physical therapy and sports rehabilitation",
  ),
  t(
    ["Med Spa", "Aesthetics", "Skin Clinic"],
    "Medical Spa",
    "HealthAndBeautyBusiness",
    ["Medical Spa", "Beauty", "Skin Care"],
    "812199",
    "botox, fillers and skin treatments",
    true,
  ),
  t(
    ["Nail Salon", "Nails", "Nail Spa"],
    "Nail Salon",
    "NailSalon",
    ["Nail Salon", "Beauty", "Personal Care"],
    "812113",
    "manicures, pedicures and nail art",
    true,
  ),
  t(
    ["Tattoo", "Tattoo Studio", "Ink"],
    "Tattoo Shop",
    "HealthAndBeautyBusiness",
    ["Tattoo Studio", "Art", "Personal Care"],
    "812199",
    "custom tattoos and piercing",
    true,
  ),
  t(
    ["Brewing", "Brewery", "Brew Co."],
    "Brewery",
    "Brewery",
    ["Brewery", "Food & Beverage", "Craft Beer"],
    "312120",
    "craft beer and a taproom",
    true,
  ),
  t(
    ["Winery", "Vineyards", "Cellars"],
    "Winery",
    "Winery",
    ["Winery", "Food & Beverage", "Tourism"],
    "312130",
    "estate wines and tastings",
    true,
  ),
  t(
    ["Marketing", "Digital Marketing", "Media"],
    "Marketing Agency",
    "ProfessionalService",
    ["Marketing Agency", "Digital Marketing", "Web Design"],
    "541810",
    "SEO, social media and web design",
  ),
  t(
    ["IT Services", "Tech Solutions", "Computer Repair"],
    "Computer Support",
    "ProfessionalService",
    ["IT Services", "Computer Repair", "Managed IT"],
    "541512",
    "managed IT, networking and computer repair",
  ),
  t(
    ["Appliance Repair", "Appliance Service"],
    "Appliance Repair Service",
    "HomeAndConstructionBusiness",
    ["Appliance Repair", "Home Services"],
    "811412",
    "washer, dryer and refrigerator repair",
  ),
  t(
    ["Towing", "Towing & Recovery", "Wrecker Service"],
    "Towing Service",
    "AutomotiveBusiness",
    ["Towing", "Roadside Assistance", "Automotive Services"],
    "488410",
    "24/7 towing and roadside assistance",
  ),
  t(
    ["Car Wash", "Auto Detailing", "Detail Shop"],
    "Car Wash",
    "AutoWash",
    ["Car Wash", "Auto Detailing", "Automotive Services"],
    "811192",
    "hand washes and full detailing",
    true,
  ),
  t(
    ["Optometry", "Eye Care", "Vision Center"],
    "Optometrist",
    "Optician",
    ["Optometry", "Eye Care", "Healthcare"],
    "621320",
    "eye exams, glasses and contact lenses",
  ),
];

export interface StateInfo {
  code: string;
  /** The state's bounding box in degrees: south, north, west and east edges (rounded outwards). */
  bounds: { south: number; north: number; west: number; east: number };
  /** Real cities with a 3-digit ZIP prefix, an area code and the city centre's coordinates. */
  cities: readonly { name: string; zip: string; area: string; latitude: number; longitude: number }[];
}

const s = (
  code: string,
  [south, north, west, east]: [number, number, number, number],
  cities: [string, string, string, number, number][],
): StateInfo => ({
  code,
  bounds: { south, north, west, east },
  cities: cities.map(([name, zip, area, latitude, longitude]) => ({ name, zip, area, latitude, longitude })),
});

/** States with their bounding boxes and real cities (ZIP prefixes, area codes, coordinates). */
export const STATES: readonly StateInfo[] = [
  s(
    "TX",
    [25.84, 36.5, -106.65, -93.51],
    [
      ["Austin", "787", "512", 30.2672, -97.7431],
      ["Houston", "770", "713", 29.7604, -95.3698],
      ["Dallas", "752", "214", 32.7767, -96.797],
      ["San Antonio", "782", "210", 29.4241, -98.4936],
      ["Fort Worth", "761", "817", 32.7555, -97.3308],
      ["El Paso", "799", "915", 31.7619, -106.485],
    ],
  ),
  s(
    "CA",
    [32.53, 42.01, -124.41, -114.13],
    [
      ["Los Angeles", "900", "213", 34.0522, -118.2437],
      ["San Diego", "921", "619", 32.7157, -117.1611],
      ["San Jose", "951", "408", 37.3382, -121.8863],
      ["Sacramento", "958", "916", 38.5816, -121.4944],
      ["Fresno", "937", "559", 36.7378, -119.7871],
      ["Oakland", "946", "510", 37.8044, -122.2712],
    ],
  ),
  s(
    "FL",
    [24.4, 31.0, -87.63, -80.03],
    [
      ["Miami", "331", "305", 25.7617, -80.1918],
      ["Orlando", "328", "407", 28.5383, -81.3792],
      ["Tampa", "336", "813", 27.9506, -82.4572],
      ["Jacksonville", "322", "904", 30.3322, -81.6557],
      ["Tallahassee", "323", "850", 30.4383, -84.2807],
    ],
  ),
  s(
    "NY",
    [40.5, 45.02, -79.76, -71.86],
    [
      ["New York", "100", "212", 40.7128, -74.006],
      ["Buffalo", "142", "716", 42.8864, -78.8784],
      ["Rochester", "146", "585", 43.1566, -77.6088],
      ["Albany", "122", "518", 42.6526, -73.7562],
      ["Syracuse", "132", "315", 43.0481, -76.1474],
    ],
  ),
  s(
    "IL",
    [36.97, 42.51, -91.51, -87.02],
    [
      ["Chicago", "606", "312", 41.8781, -87.6298],
      ["Springfield", "627", "217", 39.7817, -89.6501],
      ["Naperville", "605", "630", 41.7508, -88.1535],
      ["Peoria", "616", "309", 40.6936, -89.589],
    ],
  ),
  s(
    "PA",
    [39.72, 42.27, -80.52, -74.69],
    [
      ["Philadelphia", "191", "215", 39.9526, -75.1652],
      ["Pittsburgh", "152", "412", 40.4406, -79.9959],
      ["Allentown", "181", "610", 40.6023, -75.4714],
      ["Harrisburg", "171", "717", 40.2732, -76.8867],
    ],
  ),
  s(
    "OH",
    [38.4, 41.98, -84.82, -80.52],
    [
      ["Columbus", "432", "614", 39.9612, -82.9988],
      ["Cleveland", "441", "216", 41.4993, -81.6944],
      ["Cincinnati", "452", "513", 39.1031, -84.512],
      ["Toledo", "436", "419", 41.6528, -83.5379],
    ],
  ),
  s(
    "GA",
    [30.36, 35.0, -85.61, -80.84],
    [
      ["Atlanta", "303", "404", 33.749, -84.388],
      ["Savannah", "314", "912", 32.0809, -81.0912],
      ["Augusta", "309", "706", 33.4735, -82.0105],
      ["Marietta", "300", "770", 33.9526, -84.5499],
    ],
  ),
  s(
    "NC",
    [33.84, 36.59, -84.32, -75.46],
    [
      ["Charlotte", "282", "704", 35.2271, -80.8431],
      ["Raleigh", "276", "919", 35.7796, -78.6382],
      ["Greensboro", "274", "336", 36.0726, -79.792],
      ["Asheville", "288", "828", 35.5951, -82.5515],
    ],
  ),
  s(
    "MI",
    [41.7, 48.31, -90.42, -82.41],
    [
      ["Detroit", "482", "313", 42.3314, -83.0458],
      ["Grand Rapids", "495", "616", 42.9634, -85.6681],
      ["Lansing", "489", "517", 42.7325, -84.5555],
      ["Ann Arbor", "481", "734", 42.2808, -83.743],
    ],
  ),
  s(
    "NJ",
    [38.93, 41.36, -75.56, -73.89],
    [
      ["Newark", "071", "973", 40.7357, -74.1724],
      ["Jersey City", "073", "201", 40.7178, -74.0431],
      ["Trenton", "086", "609", 40.2206, -74.7597],
      ["Edison", "088", "732", 40.5187, -74.4121],
    ],
  ),
  s(
    "VA",
    [36.54, 39.47, -83.68, -75.24],
    [
      ["Richmond", "232", "804", 37.5407, -77.436],
      ["Virginia Beach", "234", "757", 36.8529, -75.978],
      ["Arlington", "222", "703", 38.8816, -77.091],
      ["Roanoke", "240", "540", 37.271, -79.9414],
    ],
  ),
  s(
    "WA",
    [45.54, 49.0, -124.85, -116.92],
    [
      ["Seattle", "981", "206", 47.6062, -122.3321],
      ["Spokane", "992", "509", 47.6588, -117.426],
      ["Tacoma", "984", "253", 47.2529, -122.4443],
      ["Bellevue", "980", "425", 47.6101, -122.2015],
    ],
  ),
  s(
    "AZ",
    [31.33, 37.0, -114.82, -109.05],
    [
      ["Phoenix", "850", "602", 33.4484, -112.074],
      ["Tucson", "857", "520", 32.2226, -110.9747],
      ["Mesa", "852", "480", 33.4152, -111.8315],
      ["Flagstaff", "860", "928", 35.1983, -111.6513],
    ],
  ),
  s(
    "MA",
    [41.24, 42.89, -73.51, -69.93],
    [
      ["Boston", "021", "617", 42.3601, -71.0589],
      ["Worcester", "016", "508", 42.2626, -71.8023],
      ["Springfield", "011", "413", 42.1015, -72.5898],
      ["Lowell", "018", "978", 42.6334, -71.3162],
    ],
  ),
  s(
    "TN",
    [34.98, 36.68, -90.31, -81.65],
    [
      ["Nashville", "372", "615", 36.1627, -86.7816],
      ["Memphis", "381", "901", 35.1495, -90.049],
      ["Knoxville", "379", "865", 35.9606, -83.9207],
      ["Chattanooga", "374", "423", 35.0456, -85.3097],
    ],
  ),
  s(
    "IN",
    [37.77, 41.76, -88.1, -84.78],
    [
      ["Indianapolis", "462", "317", 39.7684, -86.1581],
      ["Fort Wayne", "468", "260", 41.0793, -85.1394],
      ["Evansville", "477", "812", 37.9716, -87.5711],
    ],
  ),
  s(
    "MO",
    [35.99, 40.61, -95.77, -89.1],
    [
      ["Kansas City", "641", "816", 39.0997, -94.5786],
      ["St. Louis", "631", "314", 38.627, -90.1994],
      ["Springfield", "658", "417", 37.209, -93.2923],
    ],
  ),
  s(
    "MD",
    [37.91, 39.72, -79.49, -75.05],
    [
      ["Baltimore", "212", "410", 39.2904, -76.6122],
      ["Rockville", "208", "301", 39.084, -77.1528],
      ["Annapolis", "214", "443", 38.9784, -76.4922],
    ],
  ),
  s(
    "WI",
    [42.49, 47.08, -92.89, -86.81],
    [
      ["Milwaukee", "532", "414", 43.0389, -87.9065],
      ["Madison", "537", "608", 43.0731, -89.4012],
      ["Green Bay", "543", "920", 44.5133, -88.0133],
    ],
  ),
  s(
    "CO",
    [36.99, 41.0, -109.06, -102.04],
    [
      ["Denver", "802", "303", 39.7392, -104.9903],
      ["Colorado Springs", "809", "719", 38.8339, -104.8214],
      ["Boulder", "803", "720", 40.015, -105.2705],
      ["Fort Collins", "805", "970", 40.5853, -105.0844],
    ],
  ),
  s(
    "MN",
    [43.5, 49.38, -97.24, -89.49],
    [
      ["Minneapolis", "554", "612", 44.9778, -93.265],
      ["St. Paul", "551", "651", 44.9537, -93.09],
      ["Duluth", "558", "218", 46.7867, -92.1005],
    ],
  ),
  s(
    "SC",
    [32.03, 35.22, -83.35, -78.54],
    [
      ["Charleston", "294", "843", 32.7765, -79.9311],
      ["Columbia", "292", "803", 34.0007, -81.0348],
      ["Greenville", "296", "864", 34.8526, -82.394],
    ],
  ),
  s(
    "OR",
    [41.99, 46.29, -124.57, -116.46],
    [
      ["Portland", "972", "503", 45.5152, -122.6784],
      ["Eugene", "974", "541", 44.0521, -123.0868],
      ["Salem", "973", "971", 44.9429, -123.0351],
    ],
  ),
  s(
    "UT",
    [36.99, 42.0, -114.05, -109.04],
    [
      ["Salt Lake City", "841", "801", 40.7608, -111.891],
      ["Provo", "846", "385", 40.2338, -111.6585],
      ["Ogden", "844", "801", 41.223, -111.9738],
    ],
  ),
  s(
    "NV",
    [35.0, 42.0, -120.01, -114.04],
    [
      ["Las Vegas", "891", "702", 36.1699, -115.1398],
      ["Reno", "895", "775", 39.5296, -119.8138],
      ["Henderson", "890", "702", 36.0395, -114.9817],
    ],
  ),
  s(
    "OK",
    [33.62, 37.0, -103.0, -94.43],
    [
      ["Oklahoma City", "731", "405", 35.4676, -97.5164],
      ["Tulsa", "741", "918", 36.154, -95.9928],
      ["Norman", "730", "405", 35.2226, -97.4395],
    ],
  ),
  s(
    "LA",
    [28.93, 33.02, -94.04, -88.82],
    [
      ["New Orleans", "701", "504", 29.9511, -90.0715],
      ["Baton Rouge", "708", "225", 30.4515, -91.1871],
      ["Shreveport", "711", "318", 32.5252, -93.7502],
    ],
  ),
];

/** First words of company names: family names, places and qualities. */
export const NAME_WORDS: readonly string[] = [
  "Johnson",
  "Martinez",
  "Anderson",
  "Garcia",
  "Thompson",
  "Nguyen",
  "Patel",
  "Williams",
  "Brooks",
  "Sullivan",
  "Reyes",
  "O'Brien",
  "Kowalski",
  "Hernandez",
  "Carter",
  "Bennett",
  "Lone Star",
  "Summit",
  "Blue Ridge",
  "Evergreen",
  "Golden",
  "Bright",
  "Apex",
  "Precision",
  "All Pro",
  "Elite",
  "Premier",
  "Heritage",
  "Liberty",
  "Pioneer",
  "Cornerstone",
  "Red Oak",
  "Silver Creek",
  "Iron Horse",
  "True North",
  "Coastal",
  "Prairie",
  "Mountain View",
  "Riverside",
  "Lakeside",
  "Oak Hill",
  "Maple",
  "Cedar",
  "Sunrise",
  "Sunset",
  "Eagle",
  "Patriot",
  "Hometown",
  "Family",
  "Greenway",
  "Northside",
  "Southern",
  "Urban",
  "Harbor",
  "Keystone",
  "Magnolia",
  "Bluebonnet",
  "Desert Sky",
  "Pacific",
  "Atlantic",
  "Capital",
  "Metro",
  "Pinnacle",
  "Quality",
];

export const NAME_SHAPES: readonly string[] = [
  "{w} {t}",
  "{w} {t}",
  "{w} {t}",
  "{w} & Sons {t}",
  "{w}'s {t}",
  "{c} {t}",
  "{w} {t} Co.",
  "{w} {t} LLC",
  "{w} {w2} {t}",
  "The {t} Pros of {c}",
];

export const FIRST_NAMES: readonly string[] = [
  "james",
  "maria",
  "robert",
  "jennifer",
  "michael",
  "linda",
  "david",
  "sarah",
  "carlos",
  "emily",
  "daniel",
  "jessica",
  "kevin",
  "ashley",
  "brian",
  "amanda",
  "jose",
  "megan",
  "steven",
  "laura",
  "anthony",
  "rachel",
];

export const LAST_NAMES: readonly string[] = [
  "smith",
  "johnson",
  "garcia",
  "miller",
  "davis",
  "rodriguez",
  "wilson",
  "lee",
  "walker",
  "hall",
  "young",
  "allen",
  "king",
  "wright",
  "lopez",
  "hill",
  "scott",
  "green",
  "adams",
  "baker",
  "nelson",
  "campbell",
];

export const STREET_NAMES: readonly string[] = [
  "Main",
  "Oak",
  "Maple",
  "Cedar",
  "Elm",
  "Pine",
  "Washington",
  "Lake",
  "Hill",
  "Park",
  "Sunset",
  "Ridge",
  "Commerce",
  "Industrial",
  "Market",
  "Church",
  "Mill",
  "Highland",
  "Lincoln",
  "Jefferson",
  "Spring",
  "Valley",
];

export const STREET_SUFFIXES: readonly string[] = [
  "St",
  "Ave",
  "Rd",
  "Blvd",
  "Dr",
  "Ln",
  "Way",
  "Pkwy",
  "Ct",
  "Hwy",
];

export const TLDS: readonly string[] = [
  ".com",
  ".com",
  ".com",
  ".com",
  ".com",
  ".com",
  ".net",
  ".co",
  ".us",
  ".biz",
  ".pro",
];

export const EMAIL_BOXES: readonly string[] = [
  "info",
  "contact",
  "office",
  "hello",
  "service",
  "sales",
  "admin",
  "support",
];

export const FREE_MAIL: readonly string[] = [
  "gmail.com",
  "yahoo.com",
  "outlook.com",
  "hotmail.com",
  "aol.com",
  "icloud.com",
];

export const BUYING_SIGNALS: readonly string[] = [
  "new_website",
  "new_social_profile",
  "new_registration",
  "website_redesign",
  "new_location",
  "hiring",
  "new_domain",
  "new_reviews",
  "ssl_certificate_added",
  "new_phone_number",
];

export const WEB_TECHNOLOGIES: readonly string[] = [
  "WordPress",
  "Wix",
  "Squarespace",
  "Shopify",
  "GoDaddy Website Builder",
  "Weebly",
  "Google Analytics",
  "Google Tag Manager",
  "jQuery",
  "Bootstrap",
  "Cloudflare",
  "Facebook Pixel",
  "Elementor",
  "WooCommerce",
  "React",
  "HubSpot",
  "Calendly",
  "Mailchimp",
];

export const GENERIC_SCHEMA_TYPES: readonly string[] = [
  "Organization",
  "WebSite",
  "WebPage",
  "PostalAddress",
  "FAQPage",
];

export const HOURS: readonly string[] = [
  "Mo-Fr 08:00-17:00",
  "Mo-Fr 07:00-18:00; Sa 08:00-12:00",
  "Mo-Sa 09:00-19:00",
  "Tu-Su 11:00-22:00",
  "Mo-Su 00:00-24:00",
  "Mo-Fr 09:00-17:30",
  "Mo-Th 08:00-17:00; Fr 08:00-15:00",
];

export const DESCRIPTION_SHAPES: readonly string[] = [
  "{name} is a family-owned business in {city}, {state} offering {does}.",
  "{name} provides {does} to homes and businesses across {city} and nearby communities.",
  "Serving {city}, {state} since {year}: {does}.",
  "Locally owned in {city}. We specialize in {does}. Call for a free estimate.",
  "{name} - {does}. Licensed and insured, serving the greater {city} area.",
];

/** Weighted choices, as a list in which each item appears `weight` times (picked uniformly). */
const weighted = (items: [string, number][]): readonly string[] =>
  items.flatMap(([item, weight]) => Array<string>(weight).fill(item));

/** Mail exchangers of business domains (MX providers), by market share. */
export const MAIL_PROVIDERS: readonly string[] = weighted([
  ["google.com", 38],
  ["outlook.com", 30],
  ["secureserver.net", 12],
  ["zoho.com", 4],
  ["emailsrvr.com", 3],
  ["yahoodns.net", 2],
  ["mimecast.com", 2],
  ["pphosted.com", 1],
  ["ionos.com", 2],
  ["hostgator.com", 2],
  ["bluehost.com", 2],
  ["protonmail.ch", 1],
  ["icloud.com", 1],
]);

/** The MX provider of each free-mail domain of FREE_MAIL. */
export const FREE_MAIL_PROVIDERS: Readonly<Record<string, string>> = {
  "gmail.com": "google.com",
  "yahoo.com": "yahoodns.net",
  "outlook.com": "outlook.com",
  "hotmail.com": "outlook.com",
  "aol.com": "yahoodns.net",
  "icloud.com": "icloud.com",
};

/** Where an address was found. */
export const ADDRESS_SOURCES: readonly string[] = weighted([
  ["schema_org", 4],
  ["website", 3],
  ["google_maps", 4],
  ["yelp", 1],
  ["facebook", 1],
]);

/** Website platforms (`platform`), by share among small-business sites. */
export const PLATFORMS: readonly string[] = weighted([
  ["WordPress", 40],
  ["Wix", 14],
  ["Squarespace", 10],
  ["GoDaddy Website Builder", 9],
  ["Shopify", 4],
  ["Weebly", 3],
  ["Duda", 4],
  ["Webflow", 2],
  ["Joomla", 1],
  ["Custom", 13],
]);

export const BOOKING_OPS_CRM_SOFTWARE: readonly string[] = [
  "Housecall Pro",
  "Jobber",
  "ServiceTitan",
  "Calendly",
  "Acuity Scheduling",
  "Square Appointments",
  "Setmore",
  "Vagaro",
  "Mindbody",
  "Booksy",
  "Clio",
  "Dentrix",
  "Zenoti",
  "HubSpot CRM",
  "Salesforce",
  "Zoho CRM",
  "OpenTable",
  "Tock",
];

export const REPUTATION_CHAT_SOFTWARE: readonly string[] = [
  "Podium",
  "Birdeye",
  "NiceJob",
  "Broadly",
  "Tidio",
  "Intercom",
  "Drift",
  "LiveChat",
  "Tawk.to",
  "Zendesk Chat",
  "Trustpilot",
];

export const MARKETING_EMAIL_SOFTWARE: readonly string[] = [
  "Mailchimp",
  "Constant Contact",
  "Klaviyo",
  "HubSpot",
  "ActiveCampaign",
  "Brevo",
  "Keap",
  "MailerLite",
  "Campaign Monitor",
];

export const AD_PIXELS: readonly string[] = [
  "Meta Pixel",
  "Google Ads",
  "Google Analytics 4",
  "TikTok Pixel",
  "LinkedIn Insight Tag",
  "Microsoft Advertising",
  "Pinterest Tag",
  "Nextdoor Pixel",
];

export const PAYMENT_FINANCING_SOFTWARE: readonly string[] = [
  "Stripe",
  "Square",
  "PayPal",
  "Wisetack",
  "GreenSky",
  "Affirm",
  "CareCredit",
  "Sunbit",
  "Klarna",
  "Authorize.net",
];

export const OFFERS: readonly string[] = [
  "Free estimates",
  "Free consultation",
  "10% off your first service",
  "Senior and military discounts",
  "Financing available",
  "Same-day service",
  "Satisfaction guaranteed",
  "$49 diagnostic fee waived with repair",
  "New customer special",
];

/** Slogans; `{trade}`, `{city}` and `{year}` are filled in. */
export const SLOGAN_SHAPES: readonly string[] = [
  "Quality {trade} you can trust",
  "Serving {city} since {year}",
  "Your neighborhood {trade} experts",
  "Done right the first time",
  "Local, licensed and insured",
  "{city}'s favorite {trade}",
  "Proudly family owned",
];

/** Where a site keeps its logo. */
export const LOGO_PATHS: readonly string[] = [
  "/wp-content/uploads/logo.png",
  "/images/logo.svg",
  "/assets/img/logo.png",
  "/static/logo.webp",
  "/logo.png",
];

/** The service area as a site states it; `{city}` and `{state}` are filled in. */
export const AREA_SHAPES: readonly string[] = [
  "{city}, {state}",
  "Greater {city} Area",
  "{city} and surrounding areas",
  "{city} metro",
  "All of {state}",
];
