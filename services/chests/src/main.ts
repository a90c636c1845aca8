import { BaseConfigSchema, loadConfig, runMain } from '@ccs/shared';
import { chestsService } from './service.js';

await runMain(chestsService, () => loadConfig(BaseConfigSchema));
