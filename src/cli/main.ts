import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { existsSync, readdirSync, statSync } from 'node:fs';
import 'reflect-metadata';
import { JWT_METHODS, LOG_LEVELS } from 'src/platform/config/app-config';
import { ConfigError, validateEnv } from 'src/platform/config/validate-env';
import { PARLEY_VERSION } from 'src/platform/config/version';
import { runOptionsToEnv, type RunOptions } from './cli-env';
// Commands are loaded when they run: `run` pulls in Nest, TypeORM and pg (seconds of start-up)
// that `train`, `test` and `shell` do not need.
import { type DataValidateOptions } from './data.command';
import { type ShellOptions, type TestCoreOptions } from './dialogue.command';
import { type ExportOptions } from './export.command';
import { type ShellNluOptions } from './shell.command';
import { type TestE2eOptions } from './test-e2e.command';
import { type TestNluOptions } from './test.command';
import { type TrainOptions } from './train.command';

/** Exit codes: 0 ok, 1 the command failed, 2 bad usage (unknown flag, bad value). */
const EXIT_USAGE = 2;

/** `--augmentation`: an integer, as Rasa's argparse `type=int`. */
function augmentationFactor(value: string): number {
  if (!/^\s*-?\d+\s*$/.test(value)) throw new InvalidArgumentError('must be an integer.');
  return Number.parseInt(value, 10);
}

/** `--minimum-timestamp` / `--maximum-timestamp`: a Unix time in seconds (a float, as Rasa). */
function timestamp(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) {
    throw new InvalidArgumentError('must be a Unix timestamp in seconds.');
  }
  return n;
}

/** `--max-history`: a positive integer, as Rasa's `rasa data validate` requires. */
function maxHistory(value: string): number {
  if (!/^\s*\d+\s*$/.test(value) || Number.parseInt(value, 10) < 1) {
    throw new InvalidArgumentError('must be a positive integer.');
  }
  return Number.parseInt(value, 10);
}

function port(value: string): string {
  if (!/^\d+$/.test(value) || Number(value) > 65535) {
    throw new InvalidArgumentError('must be a port number from 0 to 65535.');
  }
  return value;
}

function notYet(what: string): () => void {
  return () => {
    process.stderr.write(`parley ${what}: not available in this version yet.\n`);
    process.exitCode = 1;
  };
}

const RUN_ENVIRONMENT_HELP = `
Environment (also read from .env; a flag wins over its variable):
  PORT, PARLEY_ENABLE_API, PARLEY_AUTH_TOKEN, JWT_SECRET, JWT_METHOD, PARLEY_CORS,
  PARLEY_CREDENTIALS, PARLEY_ENDPOINTS, PARLEY_MODEL, PARLEY_DOMAIN, PARLEY_REMOTE_STORAGE and
  LOG_LEVEL stand for the flags above. Other settings:
  DATABASE_URL       PostgreSQL to store conversations in; unset: an embedded PostgreSQL starts
  PARLEY_DATA_DIR    folder of the embedded PostgreSQL's files (default .parley)
  EMBEDDED_PG_PORT   port of the embedded PostgreSQL (default: any free port)
  LOG_REQUESTS       log one line per HTTP request at info level (default false: at debug)
  Every variable, with its default, is listed in .env.example and in the README ("Running").
`;

const TEST_E2E_HELP = `
End-to-end tests (\`parley test e2e [path]\`, Rasa Pro's format): YAML files with \`test_cases:\`
(each \`test_case: name\`, optional \`fixtures: [names]\` and \`metadata: name\`, \`steps:\` of
\`user\`, \`bot\`, \`utter\`, \`slot_was_set\`, \`slot_was_not_set\`) and optional top-level
\`fixtures:\` and \`metadata:\`. Each test case is a fresh in-memory conversation; custom actions
run on the action server of --endpoints. Exit code 1 when a test case fails.
`;

/** gcs and azure are Rasa's names for storages Parley does not build in: refuse them early. */
function refuseUnbuiltStorage(kind: string | undefined): void {
  if (kind === 'gcs' || kind === 'azure') {
    throw new CommanderError(
      EXIT_USAGE,
      'parley.badFile',
      `error: --remote-storage ${kind}: not built into Parley; use aws (any S3 API, e.g. MinIO) or a custom persistor <module>.<class>`,
    );
  }
}

export function buildCli(): Command {
  const program = new Command('parley')
    .description('Parley — a Rasa-compatible conversational-AI server in TypeScript')
    .version(PARLEY_VERSION, '-V, --version')
    .exitOverride()
    .showHelpAfterError('(run "parley --help" for usage)');

  program
    .command('run')
    .description('Start the server (REST API, channels, health endpoints)')
    .addOption(new Option('-p, --port <port>', 'port to listen on (default 5005)').argParser(port))
    .option('--enable-api', 'serve the REST API in addition to the channels', false)
    .option('-t, --auth-token <token>', 'token that API requests pass as ?token=')
    .option(
      '--jwt-secret <secret>',
      'JWT secret (HS*) or public key (RS*/ES*/PS*) for Bearer tokens',
    )
    .addOption(new Option('--jwt-method <alg>', 'JWT algorithm').choices([...JWT_METHODS]))
    .option('--cors <origins...>', 'allowed CORS origins ("*" for any)')
    .option('--credentials <file>', 'channel credentials (credentials.yml)')
    .option('--endpoints <file>', 'endpoints configuration (endpoints.yml)')
    .option('-m, --model <path>', 'model archive, or a directory of archives (default models/)')
    .option('--domain <file>', 'serve a domain file without a trained model (tracker routes only)')
    .option(
      '--remote-storage <kind>',
      'load --model <name> from aws (any S3 API) or <module>.<class>; gcs and azure are not built in and are refused',
    )
    .option(
      '--inspect',
      'serve the development inspector: a page per input channel at /webhooks/<channel>/inspect.html',
      false,
    )
    .addOption(new Option('--log-level <level>', 'log level').choices([...LOG_LEVELS]))
    .addHelpText('after', RUN_ENVIRONMENT_HELP)
    .action(async (opts: RunOptions) => {
      refuseUnbuiltStorage(opts.remoteStorage ?? process.env.PARLEY_REMOTE_STORAGE);
      const model = opts.model ?? process.env.PARLEY_MODEL;
      const remote = opts.remoteStorage ?? process.env.PARLEY_REMOTE_STORAGE;
      if (model !== undefined && model !== '' && remote === undefined && !existsSync(model)) {
        throw new CommanderError(
          EXIT_USAGE,
          'parley.badFile',
          `error: --model: no model archive or folder at ${model}: train one with "parley train", or leave --model out to start without a model`,
        );
      }
      for (const [flag, file] of [
        ['--endpoints', opts.endpoints],
        ['--domain', opts.domain],
      ] as const) {
        if (file !== undefined && !existsSync(file)) {
          throw new CommanderError(
            EXIT_USAGE,
            'parley.badFile',
            `error: ${flag}: file not found: ${file}`,
          );
        }
      }
      const config = validateEnv({ ...process.env, ...runOptionsToEnv(opts) });
      const { runServer } = await import('./run.command.js');
      await runServer(config);
    });

  program
    .command('inspect')
    .description(
      'Chat with the latest local model in the browser and inspect the conversation (as `parley run --inspect --enable-api` with only the socketio channel)',
    )
    .addOption(new Option('-p, --port <port>', 'port to listen on (default 5005)').argParser(port))
    .option('-m, --model <path>', 'model archive, or a directory of archives (default models/)')
    .option('--endpoints <file>', 'endpoints configuration (endpoints.yml)')
    .option('-t, --auth-token <token>', 'token that API requests pass as ?token=')
    .option(
      '--jwt-secret <secret>',
      'JWT secret (HS*) or public key (RS*/ES*/PS*) for Bearer tokens',
    )
    .addOption(new Option('--jwt-method <alg>', 'JWT algorithm').choices([...JWT_METHODS]))
    .option('--cors <origins...>', 'allowed CORS origins ("*" for any)')
    .addOption(new Option('--log-level <level>', 'log level').choices([...LOG_LEVELS]))
    .action(async (opts: RunOptions) => {
      const model = opts.model ?? process.env.PARLEY_MODEL ?? 'models';
      if (!hasModel(model)) {
        throw new CommanderError(
          1,
          'parley.noModel',
          `No model found at ${model}. Train a model before running the server using \`parley train\`.`,
        );
      }
      if (opts.endpoints !== undefined && !existsSync(opts.endpoints)) {
        throw new CommanderError(
          EXIT_USAGE,
          'parley.badFile',
          `error: --endpoints: file not found: ${opts.endpoints}`,
        );
      }
      const env = runOptionsToEnv({ ...opts, model, enableApi: true, inspect: true });
      const validated = validateEnv({ ...process.env, ...env });
      const config = {
        ...validated,
        inspectConnector: 'socketio' as const,
        files: { ...validated.files, credentials: null },
      };
      const { browserBase, runServer } = await import('./run.command.js');
      await runServer(config, (_app, listening) => {
        const token = config.auth.token;
        const query = token === null ? '' : `?token=${encodeURIComponent(token)}`;
        process.stdout.write(
          `Inspector: ${browserBase(config.http.host, listening)}/webhooks/socketio/inspect.html${query}\n`,
        );
      });
    });

  program
    .command('train')
    .description('Train a model (NLU and/or dialogue policies) from a Rasa-format project')
    .option('--data <paths...>', 'training data files or folders (default data/)')
    .option('--domain <path>', 'domain file or directory of domain files (default domain.yml)')
    .option('--config <file>', 'model configuration (default config.yml)')
    .option('--out <dir>', 'output directory for the model (default models/)')
    .option('--fixed-model-name <name>', 'name of the model file')
    .option('--force', 'train even when nothing changed', false)
    .addOption(
      new Option(
        '--augmentation <factor>',
        'how much to augment the stories for TEDPolicy (0: off; default 50)',
      ).argParser(augmentationFactor),
    )
    .option(
      '--remote-storage <kind>',
      'upload to aws (any S3 API) or <module>.<class> (--out: path in the bucket, default models/); gcs and azure are not built in and are refused',
    )
    .action(async (opts: TrainOptions) => {
      refuseUnbuiltStorage(opts.remoteStorage);
      const { trainModel } = await import('./train.command.js');
      const result = await trainModel(opts);
      process.stdout.write(`${result.path}\n`);
    });
  program
    .command('data')
    .description('Check training data: `data validate [stories|flows]`')
    .command('validate')
    .description(
      'Check the domain and the data for mistakes and inconsistencies (`validate stories`: only conflicts between stories; `validate flows`: only the flows)',
    )
    .argument('[what]', 'stories: check the story structure only; flows: check the flows only')
    .option('--data <paths...>', 'training data files or folders (default data/)')
    .option('-d, --domain <file>', 'domain file (default domain.yml)')
    .addOption(
      new Option(
        '--max-history <n>',
        'turns of history for the story-structure check (default: the longest story)',
      ).argParser(maxHistory),
    )
    .option('--fail-on-warnings', 'fail on warnings too', false)
    .action(async (what: string | undefined, opts: DataValidateOptions) => {
      if (what !== undefined && what !== 'stories' && what !== 'flows') {
        throw new CommanderError(
          EXIT_USAGE,
          'parley.badFile',
          `error: unknown check '${what}' (available: 'stories', 'flows')`,
        );
      }
      const { validateData } = await import('./data.command.js');
      const result = await validateData(opts, what ?? 'all');
      if (!result.ok) process.exitCode = 1;
    });
  program
    .command('test')
    .description(
      'Evaluate a model: `test core` on test stories, `test nlu` on NLU data, `test e2e` on end-to-end test cases',
    )
    .argument('[kind]', 'core, nlu or e2e')
    .argument(
      '[path]',
      '`test e2e`: file or folder of test cases (default tests/e2e_test_cases.yml; <path>::<name> runs one test case)',
    )
    .option('-m, --model <path>', 'model archive, or a directory of archives (default models/)')
    .option('--nlu <path>', 'NLU test data file or folder')
    .option(
      '--out <dir>',
      'output directory for the reports (default results/; `test e2e`: only when given)',
    )
    .option('--stories <path>', 'test stories file or folder for `test core` (default tests/)')
    .option('--e2e', '`test core`: parse the user texts and compare intents too', false)
    .option(
      '--endpoints <file>',
      '`test e2e`: endpoints.yml with the action server (custom actions run) and NLG server',
    )
    .option('--fail-fast', '`test e2e`: stop at the first failing test case', false)
    .option('-o, --e2e-results', '`test e2e`: write the result files into tests/', false)
    .addHelpText('after', TEST_E2E_HELP)
    .action(
      async (
        kind: string | undefined,
        path: string | undefined,
        opts: TestNluOptions & TestCoreOptions & TestE2eOptions,
      ) => {
        if (kind === 'e2e') {
          if (opts.endpoints !== undefined && !existsSync(opts.endpoints)) {
            throw new CommanderError(
              EXIT_USAGE,
              'parley.badFile',
              `error: --endpoints: file not found: ${opts.endpoints}`,
            );
          }
          const { testE2e } = await import('./test-e2e.command.js');
          const outcome = await testE2e(path, opts);
          process.exitCode = outcome.exitCode;
          return;
        }
        if (path !== undefined) {
          throw new CommanderError(
            EXIT_USAGE,
            'parley.badFile',
            `error: too many arguments: a path is only taken by \`test e2e\` (use --stories or --nlu)`,
          );
        }
        if (kind === 'core' || kind === undefined) {
          const { testCore } = await import('./dialogue.command.js');
          const result = await testCore(opts);
          const conv = result.evaluation.report.conversation_accuracy as Record<string, number>;
          process.stdout.write(
            `Conversation accuracy: ${conv.accuracy} (${conv.correct}/${conv.total} stories)\n` +
              `Action accuracy: ${result.evaluation.accuracy}, F1-score: ${result.evaluation.f1}, precision: ${result.evaluation.precision}\n` +
              `In training data: ${result.evaluation.in_training_data_fraction}\n` +
              `Reports written to ${opts.out ?? 'results'}\n`,
          );
          if (kind === 'core') return;
        }
        if (kind !== 'nlu') {
          if (kind !== undefined) notYet(`test ${kind}`)();
          return;
        }
        if (opts.nlu === undefined) {
          throw new CommanderError(
            EXIT_USAGE,
            'parley.badFile',
            "error: required option '--nlu <path>' not specified",
          );
        }
        const { summaryLines, testNlu } = await import('./test.command.js');
        const result = await testNlu(opts);
        for (const line of summaryLines(result.evaluation)) process.stdout.write(`${line}\n`);
        process.stdout.write(`Reports written to ${opts.out ?? 'results'}\n`);
      },
    );
  program
    .command('export')
    .description(
      "Publish stored conversations to the endpoints.yml event_broker (Rasa's `rasa export`)",
    )
    .option('--endpoints <file>', 'endpoints.yml with the event_broker (default endpoints.yml)')
    .addOption(
      new Option(
        '--minimum-timestamp <seconds>',
        'only events with a timestamp at or after this Unix time',
      ).argParser(timestamp),
    )
    .addOption(
      new Option(
        '--maximum-timestamp <seconds>',
        'only events with a timestamp before this Unix time',
      ).argParser(timestamp),
    )
    .option('--conversation-ids <ids>', 'comma-separated conversation ids (default: all)')
    .addHelpText(
      'after',
      '\nReads conversations from DATABASE_URL (unset: the embedded PostgreSQL of PARLEY_DATA_DIR).\n' +
        'Messages carry the same event_id as the live relay (dedupe downstream); RabbitMQ messages\n' +
        'also carry the header rasa-export-process-id.\n',
    )
    .action(async (opts: ExportOptions) => {
      const { exportConversations, ExportError } = await import('./export.command.js');
      try {
        const result = await exportConversations(opts);
        process.stdout.write(
          `Done! Published ${result.events} events of ${result.conversations} conversations to the event broker (export process id ${result.processId}).\n`,
        );
      } catch (e) {
        if (!(e instanceof ExportError)) throw e;
        process.stderr.write(`parley export: ${e.message}\n`);
        process.exitCode = 1;
      }
    });
  program
    .command('shell')
    .description('Talk to the assistant in the terminal; `shell nlu` parses messages only')
    .argument('[kind]', 'nlu for parse-only')
    .option('-m, --model <path>', 'model archive, or a directory of archives (default models/)')
    .option('--endpoints <file>', 'endpoints.yml with the action_endpoint for custom actions')
    .action(async (kind: string | undefined, opts: ShellNluOptions & ShellOptions) => {
      if (kind === undefined) {
        const { shell } = await import('./dialogue.command.js');
        await shell(opts);
        return;
      }
      if (kind !== 'nlu') {
        notYet(`shell ${kind}`)();
        return;
      }
      const { shellNlu } = await import('./shell.command.js');
      await shellNlu(opts);
    });
  return program;
}

/** A model archive, or a folder holding at least one (`parley train` writes `*.tar.gz`). */
function hasModel(path: string): boolean {
  try {
    if (!statSync(path).isDirectory()) return true;
    return readdirSync(path).some((f) => f.endsWith('.tar.gz'));
  } catch {
    return false;
  }
}

function loadDotEnv(): void {
  if (existsSync('.env')) {
    try {
      process.loadEnvFile('.env');
    } catch (e) {
      process.stderr.write(`warning: could not read .env: ${(e as Error).message}\n`);
    }
  }
}

async function main(argv: string[]): Promise<void> {
  loadDotEnv();
  const program = buildCli();
  try {
    await program.parseAsync(argv);
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version') {
        process.exitCode = 0;
        return;
      }
      if (e.code === 'parley.noModel') {
        process.stderr.write(`${e.message}\n`);
        process.exitCode = 1;
        return;
      }
      if (e.code === 'parley.badFile') process.stderr.write(`${e.message}\n`);
      process.exitCode = EXIT_USAGE;
      return;
    }
    if (e instanceof ConfigError) {
      process.stderr.write(`${e.message}\n`);
      process.exitCode = EXIT_USAGE;
      return;
    }
    process.stderr.write(`parley: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  }
}

void main(process.argv);
