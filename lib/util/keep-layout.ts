/**
 * One instance of a class kept alive for the life of the process, so that
 * V8 keeps the hidden class its instances share.
 *
 * Why: at a full garbage collection V8 drops a hidden class that no live
 * object has any more, and marks for deoptimization all the code it
 * optimized against it ("embedded weak objects cleared" in --trace-deopt).
 * The objects one call makes and forgets (apply()'s request writer, a
 * reply's reader, dump()'s reader) are all dead between calls, so after
 * every full collection the next large call ran their methods unoptimized
 * and V8 compiled them again. With one instance kept, the hidden class and
 * the optimized code outlive the calls. A kept instance must be built the
 * way every other one is (the same fields, assigned in the same order), or
 * it keeps a different hidden class.
 */
const kept: object[] = [];

/** Keeps `instance` alive for good; returns it. */
export function keepLayout<T extends object>(instance: T): T {
  kept.push(instance);
  return instance;
}

/** The instances kept, for the test that checks each has the hidden class its class's instances get. */
export function keptInstances(): readonly object[] {
  return kept;
}
