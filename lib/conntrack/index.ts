/** Conntrack over nfnetlink: the Conntrack client, its event stream and types. */
export { Conntrack } from './client.js';
export { ConntrackEventStream } from './events.js';
export * from './types.js';
