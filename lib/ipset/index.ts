/** ipset over nfnetlink: the Ipset client and its types. */
export { Ipset } from './client.js';
export { IpsetBulkError, type BulkFailure, type BulkEntryFailure, type BulkHalt } from './errors.js';
export * from './types.js';
