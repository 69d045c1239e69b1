// The composition root's public surface: other modules import from here only.
export { readDialogueEndpoints, type DialogueEndpoints } from './endpoints';
export { EngineModule } from './engine.module';
