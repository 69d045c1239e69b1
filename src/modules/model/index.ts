/**
 * The model module's public surface: every import from outside src/modules/model goes through
 * this file (the CLI excepted: its commands load only the files they use).
 */
export { ModelHttpModule } from './http/model-http.module';
export { ModelLoadedGuard } from './model-loaded.guard';
export { ModelModule } from './model.module';
export { ServedModel } from './served-model';
export { loadModelArchive } from './sources/model-loader';
export { DEFAULT_FETCH_LIMITS } from './sources/model-server-client';
export { ModelServerPoller } from './sources/model-server-poller';
export { ModelStore } from './sources/model-store.service';
export { TrainingJobs } from './training/training-jobs';
