import { DomainError } from './errors.js';

/**
 * Time zone names as the caller spelled them, in canonical capitalisation.
 *
 * Node 20's ICU canonicalizes to old CLDR ids: resolvedOptions().timeZone turns `Europe/Kyiv` into
 * `Europe/Kiev` and `Asia/Kolkata` into `Asia/Calcutta`, and Intl.supportedValuesOf('timeZone') lists
 * only those old ids. A job keeps the name its caller chose (the current IANA one, usually), with only
 * its letter case corrected. Pure and side-effect free; config may call it too (it imports only the
 * domain's error).
 */

/**
 * IANA names (zones and links of tzdata 2025c, file tzdata.zi) that Node 20's ICU accepts but does not
 * list in Intl.supportedValuesOf('timeZone'): renamed zones (Europe/Kyiv, Asia/Kolkata, America/Nuuk),
 * backward links (US/Eastern) and the Etc/ family. Only used to correct letter case.
 */
const UNLISTED_NAMES: readonly string[] = [
  'Africa/Asmara',
  'Africa/Timbuktu',
  'America/Argentina/Buenos_Aires',
  'America/Argentina/Catamarca',
  'America/Argentina/ComodRivadavia',
  'America/Argentina/Cordoba',
  'America/Argentina/Jujuy',
  'America/Argentina/Mendoza',
  'America/Atikokan',
  'America/Atka',
  'America/Ensenada',
  'America/Fort_Wayne',
  'America/Indiana/Indianapolis',
  'America/Kentucky/Louisville',
  'America/Knox_IN',
  'America/Montreal',
  'America/Nipigon',
  'America/Nuuk',
  'America/Pangnirtung',
  'America/Porto_Acre',
  'America/Rainy_River',
  'America/Rosario',
  'America/Santa_Isabel',
  'America/Shiprock',
  'America/Thunder_Bay',
  'America/Virgin',
  'America/Yellowknife',
  'Antarctica/South_Pole',
  'Asia/Ashkhabad',
  'Asia/Choibalsan',
  'Asia/Chongqing',
  'Asia/Chungking',
  'Asia/Dacca',
  'Asia/Harbin',
  'Asia/Ho_Chi_Minh',
  'Asia/Istanbul',
  'Asia/Kashgar',
  'Asia/Kathmandu',
  'Asia/Kolkata',
  'Asia/Macao',
  'Asia/Tel_Aviv',
  'Asia/Thimbu',
  'Asia/Ujung_Pandang',
  'Asia/Ulan_Bator',
  'Asia/Yangon',
  'Atlantic/Faroe',
  'Atlantic/Jan_Mayen',
  'Australia/ACT',
  'Australia/Canberra',
  'Australia/Currie',
  'Australia/LHI',
  'Australia/NSW',
  'Australia/North',
  'Australia/Queensland',
  'Australia/South',
  'Australia/Tasmania',
  'Australia/Victoria',
  'Australia/West',
  'Australia/Yancowinna',
  'Brazil/Acre',
  'Brazil/DeNoronha',
  'Brazil/East',
  'Brazil/West',
  'CET',
  'CST6CDT',
  'Canada/Atlantic',
  'Canada/Central',
  'Canada/Eastern',
  'Canada/Mountain',
  'Canada/Newfoundland',
  'Canada/Pacific',
  'Canada/Saskatchewan',
  'Canada/Yukon',
  'Chile/Continental',
  'Chile/EasterIsland',
  'Cuba',
  'EET',
  'EST',
  'EST5EDT',
  'Egypt',
  'Eire',
  'Etc/GMT',
  'Etc/GMT+0',
  'Etc/GMT+1',
  'Etc/GMT+10',
  'Etc/GMT+11',
  'Etc/GMT+12',
  'Etc/GMT+2',
  'Etc/GMT+3',
  'Etc/GMT+4',
  'Etc/GMT+5',
  'Etc/GMT+6',
  'Etc/GMT+7',
  'Etc/GMT+8',
  'Etc/GMT+9',
  'Etc/GMT-0',
  'Etc/GMT-1',
  'Etc/GMT-10',
  'Etc/GMT-11',
  'Etc/GMT-12',
  'Etc/GMT-13',
  'Etc/GMT-14',
  'Etc/GMT-2',
  'Etc/GMT-3',
  'Etc/GMT-4',
  'Etc/GMT-5',
  'Etc/GMT-6',
  'Etc/GMT-7',
  'Etc/GMT-8',
  'Etc/GMT-9',
  'Etc/GMT0',
  'Etc/Greenwich',
  'Etc/UCT',
  'Etc/UTC',
  'Etc/Universal',
  'Etc/Zulu',
  'Europe/Belfast',
  'Europe/Kyiv',
  'Europe/Nicosia',
  'Europe/Tiraspol',
  'Europe/Uzhgorod',
  'Europe/Zaporozhye',
  'GB',
  'GB-Eire',
  'GMT',
  'GMT+0',
  'GMT-0',
  'GMT0',
  'Greenwich',
  'HST',
  'Hongkong',
  'Iceland',
  'Iran',
  'Israel',
  'Jamaica',
  'Japan',
  'Kwajalein',
  'Libya',
  'MET',
  'MST',
  'MST7MDT',
  'Mexico/BajaNorte',
  'Mexico/BajaSur',
  'Mexico/General',
  'NZ',
  'NZ-CHAT',
  'Navajo',
  'PRC',
  'PST8PDT',
  'Pacific/Chuuk',
  'Pacific/Johnston',
  'Pacific/Kanton',
  'Pacific/Pohnpei',
  'Pacific/Samoa',
  'Pacific/Yap',
  'Poland',
  'Portugal',
  'ROC',
  'ROK',
  'Singapore',
  'Turkey',
  'UCT',
  'US/Alaska',
  'US/Aleutian',
  'US/Arizona',
  'US/Central',
  'US/East-Indiana',
  'US/Eastern',
  'US/Hawaii',
  'US/Indiana-Starke',
  'US/Michigan',
  'US/Mountain',
  'US/Pacific',
  'US/Samoa',
  'UTC',
  'Universal',
  'W-SU',
  'WET',
  'Zulu',
];

let byLowerCase: Map<string, string> | null = null;

function spellings(): Map<string, string> {
  if (byLowerCase === null) {
    byLowerCase = new Map();
    // Listed ids win over the unlisted table (neither has duplicates ignoring case, but be explicit).
    for (const name of UNLISTED_NAMES) byLowerCase.set(name.toLowerCase(), name);
    for (const name of Intl.supportedValuesOf('timeZone')) byLowerCase.set(name.toLowerCase(), name);
  }
  return byLowerCase;
}

/**
 * The caller's zone in canonical capitalisation (`europe/kyiv` → `Europe/Kyiv`), never replaced by
 * another name for the same zone (`Europe/Kyiv` stays `Europe/Kyiv`, `Europe/Kiev` stays `Europe/Kiev`).
 * Null when the runtime does not know the zone, or for a UTC offset (`+05:30`): not a zone name.
 *
 * Order: a name Intl lists or our table holds, matched ignoring case; else the runtime's own id when it
 * is the same name (`etc/gmt+5` → `Etc/GMT+5`); else the caller's spelling, which the runtime accepts.
 */
export function canonicalZone(tz: string): string | null {
  if (tz === '' || /^[+-]/.test(tz)) return null;
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
  const lower = tz.toLowerCase();
  return spellings().get(lower) ?? (resolved.toLowerCase() === lower ? resolved : tz);
}

/**
 * A valid IANA zone name as the runtime's Intl knows it (for cron jobs and the configuration alike). UTC
 * offsets ("+05:30") are not zone names: newer runtimes accept them, Node 20 does not, so they are refused
 * everywhere and a configuration that starts on one machine starts on all.
 */
export function isValidTimezone(tz: string): boolean {
  if (validZones.has(tz)) return true;
  if (tz === '' || /^[+-]/.test(tz)) return false;
  try {
    // Building a formatter costs ~50 µs; the zones in use are few, so remember the good ones.
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    if (validZones.size < 1_000) validZones.add(tz);
    return true;
  } catch {
    return false;
  }
}
const validZones = new Set<string>();

/**
 * A schedule's time zone as the caller spelled it, letter case corrected ("europe/kyiv" becomes
 * "Europe/Kyiv"), never the runtime's older alias (Node 20 resolves "Europe/Kyiv" to "Europe/Kiev");
 * invalid_timezone when there is no such zone.
 */
export function scheduleZone(requested: string): string {
  const zone = canonicalZone(requested);
  if (zone === null) {
    throw new DomainError(
      'invalid_timezone',
      `timezone: unknown IANA time zone "${requested}" (expected e.g. "Europe/Berlin" or "UTC")`,
    );
  }
  return zone;
}
