import { loadConfig, runMain } from '@ccs/shared';
import { ChestsConfigSchema } from './config.js';
import { chestsService } from './service.js';

await runMain(chestsService, () => loadConfig(ChestsConfigSchema));
