import { loadConfig, runMain } from '@ccs/shared';
import { PlayersConfigSchema } from './config.js';
import { playersService } from './service.js';

await runMain(playersService, () => loadConfig(PlayersConfigSchema));
