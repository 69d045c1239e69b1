'use strict';
// Prints the ten slowest test files, then one plain closing line,
// "jest: N passed, N failed, N skipped", after jest's own summary.
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const slowest = results.testResults
      .map((r) => ({ file: r.testFilePath, ms: r.perfStats.end - r.perfStats.start }))
      .filter((r) => Number.isFinite(r.ms))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 10);
    if (slowest.length > 1) {
      process.stdout.write('\nslowest test files:\n');
      for (const { file, ms } of slowest) {
        const relative = file.startsWith(`${process.cwd()}/`)
          ? file.slice(process.cwd().length + 1)
          : file;
        process.stdout.write(`  ${(ms / 1000).toFixed(1).padStart(6)} s  ${relative}\n`);
      }
    }
    const skipped = results.numPendingTests + results.numTodoTests;
    process.stdout.write(
      `\njest: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${skipped} skipped\n`,
    );
  }
}
module.exports = SummaryReporter;
