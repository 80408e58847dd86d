/** ipset over nfnetlink: the Ipset client, its errors and its types. */
export { Ipset } from './client.js';
export {
  IpsetError,
  IpsetBulkError,
  IpsetUnsupportedError,
  type IpsetErrorInit,
  type BulkFailure,
  type BulkEntryFailure,
  type BulkHalt,
  type ReplaceContext,
} from './errors.js';
export * from './types.js';
