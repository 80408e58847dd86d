// The types of binary.mjs (plain JavaScript so the benchmarks can load it
// without a TypeScript loader), for the tests that import it.

/** The built kube-proxy-ipvs binary. */
export declare const MAIN: string;

/** The flags of MAIN's interpreter line. */
export declare const BINARY_NODE_FLAGS: string[];
