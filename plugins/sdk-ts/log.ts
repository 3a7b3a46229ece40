// The engine's log, tagged with the plugin's name (capability "log").

import { write } from "wabp:plugin/log@0.1.0";

export const log = {
  debug: (message: string) => write("debug", message),
  info: (message: string) => write("info", message),
  warn: (message: string) => write("warn", message),
  error: (message: string) => write("error", message),
};
