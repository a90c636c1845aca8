import { loadConfig, runMain } from '@ccs/shared';
import { StoreConfigSchema } from './config.js';
import { storeService } from './service.js';

await runMain(storeService, () => loadConfig(StoreConfigSchema));
