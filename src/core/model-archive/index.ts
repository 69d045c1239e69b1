export { type ArchiveProblem } from 'src/core/model-archive/archive-error';
export { checkMemberPath, isCanonicalMemberPath } from 'src/core/model-archive/archive-path';
export {
  findLatestModel,
  scanModelDirectory,
  type FindModelOptions,
  type ModelDirectoryScan,
  type SkippedModelArchive,
} from 'src/core/model-archive/find-latest';
export { canonicalJson, fingerprint } from 'src/core/model-archive/fingerprint';
export { checkLocalModelPath, type CheckedModelPath } from 'src/core/model-archive/local-path';
export {
  KNOWN_FORMAT_VERSIONS,
  MANIFEST_PATH,
  MODEL_FORMAT,
  MODEL_FORMAT_VERSION,
  checkCompatibility,
  parseManifest,
  type ModelManifest,
  type ParleyCompatibility,
} from 'src/core/model-archive/manifest';
export {
  MODEL_ARCHIVE_SUFFIX,
  fixedModelFileName,
  generateModelName,
} from 'src/core/model-archive/model-name';
export {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_COMPRESSION_RATIO,
  DEFAULT_MAX_FILES,
  DEFAULT_MAX_FILE_BYTES,
  DEFAULT_MAX_UNPACKED_BYTES,
  isModelArchiveError,
  readModelArchive,
  readModelManifest,
  type ArchiveLimits,
  type ModelArchiveContents,
  type ReadModelArchiveOptions,
} from 'src/core/model-archive/read-archive';
export { compareSemVer, parseSemVer, type SemVer } from 'src/core/model-archive/semver';
export {
  writeModelArchive,
  type WriteModelArchiveOptions,
  type WrittenModelArchive,
} from 'src/core/model-archive/write-archive';
