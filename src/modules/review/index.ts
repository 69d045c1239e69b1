// The review module's public file.
export { ReviewModule } from './review.module';
