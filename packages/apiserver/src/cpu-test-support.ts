/**
 * This thread's CPU time in milliseconds, for tests that bound work. Work is bounded in CPU time,
 * not wall time: on a loaded machine the thread is descheduled for as long as the scheduler likes,
 * which is no work of ours.
 */
export const cpuMs = (): number => {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1_000;
};
