export { Ipvs, keyOf } from './client.js';
export { formatList } from './format.js';
export type * from './types.js';
