import { BlockList, isIP } from "node:net";

/**
 * IPv4 ranges an outbound request to a customer-supplied URL must never reach: this host, private
 * networks, shared carrier-grade NAT, loopback, link-local (which holds the cloud metadata address
 * 169.254.169.254), IETF protocol assignments, documentation and benchmarking networks, multicast,
 * reserved space and broadcast. A receiver on any of them is inside some operator's network, not
 * a customer's public endpoint.
 */
const REFUSED_IPV4: readonly [string, number][] = [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
  ["255.255.255.255", 32],
];

/**
 * IPv6 ranges refused for the same reasons: unspecified, loopback, unique local (holds the AWS
 * metadata address fd00:ec2::254), link-local, the deprecated site-local range, multicast,
 * documentation, NAT64 (which a local translator turns into any IPv4 address, private ones
 * included) and the discard prefix. IPv4-mapped and IPv4-compatible forms are judged by their
 * embedded IPv4 address instead.
 */
const REFUSED_IPV6: readonly [string, number][] = [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7],
  ["fe80::", 10],
  ["fec0::", 10],
  ["ff00::", 8],
  ["2001:db8::", 32],
  ["64:ff9b::", 96],
  ["64:ff9b:1::", 48],
  ["100::", 64],
];

const refusedV4 = blockList(REFUSED_IPV4, "ipv4");
const refusedV6 = blockList(REFUSED_IPV6, "ipv6");

function blockList(ranges: readonly [string, number][], type: "ipv4" | "ipv6"): BlockList {
  const list = new BlockList();
  for (const [network, prefix] of ranges) list.addSubnet(network, prefix, type);
  return list;
}

/**
 * True when an outbound request must not connect to `ip`: a refused IPv4 or IPv6 range, an
 * IPv4-mapped (`::ffff:127.0.0.1`, `::ffff:7f00:1`), IPv4-translated or IPv4-compatible IPv6 address
 * whose embedded IPv4 address is refused, or anything that is not a well-formed address (a check
 * that cannot parse what it judges must fail closed). A zone suffix (`fe80::1%eth0`) is ignored.
 */
export function isRefusedAddress(ip: string): boolean {
  const address = ip.replace(/%[^%]*$/, "");
  switch (isIP(address)) {
    case 4:
      return refusedV4.check(address, "ipv4");
    case 6: {
      const embedded = embeddedIPv4(address);
      if (embedded !== null) return refusedV4.check(embedded, "ipv4");
      return refusedV6.check(address, "ipv6");
    }
    default:
      return true;
  }
}

/**
 * The IPv4 address inside an IPv4-mapped (`::ffff:a.b.c.d`), IPv4-translated (`::ffff:0:a.b.c.d`)
 * or IPv4-compatible (`::a.b.c.d`) IPv6 address, else null. The operating system connects such an
 * address to the embedded IPv4 host, so that is the address to judge. `::` and `::1` count as
 * compatible forms of 0.0.0.0 and 0.0.0.1, which are refused too.
 */
function embeddedIPv4(address: string): string | null {
  const groups = ipv6Groups(address);
  const zeros = (from: number, to: number) => groups.slice(from, to).every((group) => group === 0);
  const mapped = zeros(0, 5) && groups[5] === 0xffff;
  const translated = zeros(0, 4) && groups[4] === 0xffff && groups[5] === 0;
  const compatible = zeros(0, 6);
  if (!mapped && !translated && !compatible) return null;
  const high = groups[6] ?? 0;
  const low = groups[7] ?? 0;
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join(".");
}

/** The eight 16-bit groups of an IPv6 address that `isIP` has accepted (`::` and a dotted tail expanded). */
function ipv6Groups(address: string): number[] {
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(address);
  let text = address;
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${address.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((group) => parseInt(group, 16)));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}
