import { NestFactory } from '@nestjs/core';
import { type NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from 'src/app.module';
import { type AppConfig } from 'src/platform/config/app-config';
import { configureApp } from './configure-app';

/** Builds and configures the Nest application; shared by `parley run` and the e2e tests. */
export async function createParleyApp(
  config: AppConfig,
  databaseUrl: string,
): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(
    AppModule.forRoot(config, databaseUrl),
    { bodyParser: false, bufferLogs: true, abortOnError: false },
  );
  configureApp(app, config);
  return app;
}
