// What a change of the `testInbox.*` settings sets off. Pure: activate() carries it out
// (config/watch.ts reads the settings and asks this module).
import { SettingKey, type Settings } from './settings';

/** Setting groups whose change needs a new local server process (its flags come from them). */
const LOCAL_SERVER_GROUPS = ['local', 'retention'] as const;

export interface SettingsChangeEffects {
  /** Drop the client and our local server process, connect again on next use, then reload the tree. */
  reconnect: boolean;
  /** Another server: read marks are kept per server. */
  resetReadState: boolean;
  /** The polling interval changed. */
  restartPollTimer: boolean;
  /** Reload the tree without reconnecting (the listed domains changed). Implied by `reconnect`. */
  reloadTree: boolean;
}

/**
 * The effects of a settings change. `affects(key)` says whether a key relative to the
 * `testInbox` section (a group such as `local`, or a full key) is affected, as
 * ConfigurationChangeEvent.affectsConfiguration does.
 */
export function settingsChangeEffects(before: Settings, after: Settings, affects: (key: string) => boolean): SettingsChangeEffects {
  const serverChanged = JSON.stringify(before.server) !== JSON.stringify(after.server);
  const localChanged = LOCAL_SERVER_GROUPS.some((g) => affects(g));
  const reconnect = serverChanged || localChanged;
  return {
    reconnect,
    resetReadState: serverChanged,
    restartPollTimer: affects(SettingKey.pollSeconds),
    reloadTree: !reconnect && affects(SettingKey.domains),
  };
}
