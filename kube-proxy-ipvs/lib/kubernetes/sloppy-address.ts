/**
 * k8s.io/utils/net's ParseIPSloppy and ParseCIDRSloppy, which kube-proxy
 * reads its configuration with: an IPv4 part may have leading zeros, read
 * as decimal ("010.1.2.3" is 10.1.2.3), as Go parsed addresses before 1.17
 * and Kubernetes still does for stored values. The zeros are stripped and
 * the result parsed strictly, as upstream does. Kept here, not in the
 * library, whose own parsing stays strict.
 */
import { canonicalAddress, parseCidr, type AddressFamily, type Cidr } from 'ipvs-netlink/address';

const LEADING_ZEROS = /(^|:)0*(0|[1-9][0-9]*)\.0*(0|[1-9][0-9]*)\.0*(0|[1-9][0-9]*)\.0*(0|[1-9][0-9]*)((\/)0*(0|[1-9][0-9]*))?$/;
const stripLeadingZeros = (value: string) => value.replace(LEADING_ZEROS, '$1$2.$3.$4.$5$7$8');

/** The canonical text of an IPv4-mapped IPv6 address, as canonicalAddress writes it. */
const V4_MAPPED = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/;

/**
 * canonicalAddress(), also taking IPv4 parts with leading zeros (ParseIPSloppy); white space is refused.
 * An IPv4-mapped IPv6 address (::ffff:a.b.c.d, however spelt) is the IPv4 address, as Go's net.IP
 * takes it (To4) and prints it: an old cluster's object may hold one where an IPv4 address goes.
 */
export function canonicalAddressSloppy(value: string): string | undefined {
  const text = canonicalAddress(value) ?? canonicalAddress(stripLeadingZeros(value));
  return text === undefined ? undefined : (unmapped(text) ?? text);
}

/** The IPv4 address of an IPv4-mapped one's canonical text; undefined for any other. */
function unmapped(text: string): string | undefined {
  const mapped = V4_MAPPED.exec(text);
  if (!mapped) return undefined;
  const [high, low] = [parseInt(mapped[1], 16), parseInt(mapped[2], 16)];
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

/**
 * parseCidr(), also taking IPv4 parts with leading zeros (ParseCIDRSloppy); unlike parseCidr, white space around it is refused, as Go's.
 * An IPv4-mapped network of prefix 96 or more is the IPv4 one, as Go's IPNet prints it ("::ffff:10.0.0.0/104" is 10.0.0.0/8).
 */
export function parseCidrSloppy(value: string, field: string): Cidr {
  if (value !== value.trim()) throw new TypeError(`${field}: expected a CIDR (address/prefix) without white space, got ${JSON.stringify(value)}`);
  let cidr: Cidr;
  try {
    cidr = parseCidr(value, field);
  } catch (err) {
    const stripped = stripLeadingZeros(value);
    if (stripped === value) throw err;
    cidr = parseCidr(stripped, field);
  }
  const v4 = cidr.family === 'inet6' && cidr.prefix >= 96 ? unmapped(cidr.network) : undefined;
  return v4 === undefined ? cidr : parseCidr(`${v4}/${cidr.prefix - 96}`, field);
}

/** netutils.IPFamilyOfCIDRString: the family of a CIDR read as ParseCIDRSloppy reads it, undefined when it is none. */
export function cidrFamilySloppy(value: string): AddressFamily | undefined {
  try {
    return parseCidrSloppy(value, 'CIDR').family;
  } catch {
    return undefined;
  }
}
