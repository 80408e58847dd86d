/**
 * Reply records built by hand, as the addon writes them from the kernel's
 * answers to a dump (native/ipvs/records.h): services answer request 0,
 * the destinations of service i request i + 1. For tests that read dumps
 * without a kernel.
 */
import { AF_INET, AF_INET6, FORWARD, IPPROTO } from '../../lib/ipvs/constants.js';
import { KIND, LITTLE_ENDIAN, REP } from '../../lib/ipvs/records.js';

/** Reply records as the addon writes them: services of request 0, destinations of request i + 1. */
export class Replies {
  private readonly view: DataView;
  private n = 0;
  constructor(count: number) {
    this.view = new DataView(new ArrayBuffer(count * REP.size));
  }
  service(address: number[] | number, port: number, scheduler: number): this {
    const at = this.next(KIND.service, 0);
    if (typeof address === 'number') {
      this.view.setUint16(at + REP.Af, AF_INET6, LITTLE_ENDIAN);
      this.view.setUint32(at + REP.AddrText, address, LITTLE_ENDIAN);
    } else {
      this.view.setUint16(at + REP.Af, AF_INET, LITTLE_ENDIAN);
      address.forEach((b, k) => this.view.setUint8(at + REP.Addr + k, b));
    }
    this.view.setUint16(at + REP.Port, port, LITTLE_ENDIAN);
    this.view.setUint16(at + REP.SvcProtocol, IPPROTO.tcp, LITTLE_ENDIAN);
    this.view.setUint16(at + REP.SvcSched, scheduler, LITTLE_ENDIAN);
    return this;
  }
  destination(service: number, last: number, weight: number, conns: bigint): this {
    const at = this.next(KIND.destination, service + 1);
    this.view.setUint16(at + REP.Af, AF_INET, LITTLE_ENDIAN);
    [10, 1, 0, last].forEach((b, k) => this.view.setUint8(at + REP.Addr + k, b));
    this.view.setUint16(at + REP.Port, 8080, LITTLE_ENDIAN);
    this.view.setUint32(at + REP.DestFwd, FORWARD.masq, LITTLE_ENDIAN);
    this.view.setUint32(at + REP.DestWeight, weight, LITTLE_ENDIAN);
    this.view.setBigUint64(at + REP.Stats, conns, LITTLE_ENDIAN);
    return this;
  }
  /** Records [from, to) as their own buffer, as a chunk is. */
  slice(from: number, to = this.n): ArrayBuffer {
    return (this.view.buffer as ArrayBuffer).slice(from * REP.size, to * REP.size);
  }
  private next(kind: number, request: number): number {
    const at = this.n++ * REP.size;
    this.view.setUint8(at + REP.Kind, kind);
    this.view.setUint8(at + REP.HasStats, 1);
    this.view.setUint32(at + REP.Request, request, LITTLE_ENDIAN);
    return at;
  }
}
