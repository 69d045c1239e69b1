export { readBraunCorpus, type BraunCorpus } from 'src/core/training-data/braun-corpus-reader';
export {
  readConfigYaml,
  type ComponentConfig,
  type NluConfig,
  type ProjectConfig,
} from 'src/core/training-data/config-reader';
export { parseAnnotatedText } from 'src/core/training-data/entity-annotation-parser';
export * from 'src/core/training-data/nlu-training-data';
export { readNluYaml, type NluYamlReadResult } from 'src/core/training-data/nlu-yaml-reader';
export { MAX_YAML_DEPTH, checkYamlDepth } from 'src/core/training-data/yaml-source';
