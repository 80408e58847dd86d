// Must not compile: proves the strict build really checks against the
// package's declarations (a typo'd protocol, a field no spec has).
import { Ipvs } from 'ipvs-netlink';

const ipvs = await Ipvs.open();
await ipvs.addService({ protocol: 'tcpp', address: '10.96.0.10', port: 80 });
await ipvs.addService({ protocol: 'tcp', address: '10.96.0.10', port: 80, schedular: 'rr' });
