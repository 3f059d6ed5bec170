/** Whether dist/console/ is missing or older than console/. */
export function consoleBuildStale(): boolean;
/** Runs `vite build` for the console if it is stale; returns the exit status (0 when nothing was to do). */
export function buildConsoleIfStale(log?: (line: string) => void): number;
