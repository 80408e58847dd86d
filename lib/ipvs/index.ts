export { Ipvs, keyOf } from './client.js';
export type * from './types.js';
