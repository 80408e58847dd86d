export interface Link {
  index: number;
  name: string;
  up: boolean;
  /** The link type (`dummy`, `veth`, ...), empty for physical devices. */
  kind: string;
}

export interface InterfaceAddress {
  family: 'inet' | 'inet6';
  address: string;
  prefixLength: number;
  /** The link's index and name. */
  index: number;
  link?: string;
  scope: number;
  flags: number;
}
