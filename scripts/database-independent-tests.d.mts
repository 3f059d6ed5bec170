/** The test files (`test/….test.ts`, relative to the repository root, sorted) that do not depend on the suite's database. */
export function databaseIndependentTestFiles(): string[];
