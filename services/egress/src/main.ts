import { loadConfig, runMain } from '@ccs/shared';
import { EgressConfigSchema } from './config.js';
import { egressService } from './service.js';

await runMain(egressService, () => loadConfig(EgressConfigSchema));
