/** Whether dist/console/ is missing or older than console/. */
export function consoleBuildStale(): boolean;
/** Runs `vite build` for the console if it is stale; returns the exit status (0 when nothing was to do). */
export function buildConsoleIfStale(log?: (line: string) => void): number;
/** A file's or folder's modification time, or undefined when it does not exist. */
export function mtime(path: string): number | undefined;
/** The newest modification time under `folder` (relative to the repository), the folder itself included. */
export function newestUnder(folder: string): number;
