import { BaseConfigSchema, loadConfig, runMain } from '@ccs/shared';
import { collectionsService } from './service.js';

await runMain(collectionsService, () => loadConfig(BaseConfigSchema));
