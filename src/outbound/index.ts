/**
 * The outbound HTTP guard: every request the service sends to a customer-supplied URL goes through
 * one `Outbound` (the application context's `outbound`).
 */
export { isRefusedAddress } from "./addresses.js";
export { OutboundRefusedError, type OutboundPolicy, type Resolver } from "./destination.js";
export { describeFailure, firstChars, type PostResult } from "./result.js";
export { Outbound, type PostRequest } from "./outbound.js";
export {
  closePageAgent,
  fetchPage,
  PageFetchError,
  type FetchedPage,
  type FetchPageOptions,
  type PageFetchFailure,
} from "./page.js";
