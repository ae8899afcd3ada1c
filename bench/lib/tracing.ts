// Whether node's tracing options were asked for (PARLEY_BENCH_NODE_ARGS for Parley,
// PARLEY_BENCH_FLOOR_NODE_ARGS for the node:http floor): then what a server prints goes to
// bench/results/trace-<name>-<pid>.out, with the probe's window marks between. Read by the
// bench and by the probe in each server, which inherits the bench's environment.
export const tracing = (): boolean =>
  Boolean(process.env.PARLEY_BENCH_NODE_ARGS || process.env.PARLEY_BENCH_FLOOR_NODE_ARGS);
