/**
 * A seeded, generated stand-in for StableToolBench's repository (ToolSearcher §4.1,
 * App. B.1: 16k RapidAPI APIs in 49 categories, grouped into tools and collections),
 * small enough to build in the browser and large enough that search is needed.
 *
 * Simplifications: English templates only; parameters come from a per-category pool,
 * so inputs are plausible but not domain-exact; gold sets are exactly the APIs the
 * text describes (no distractor APIs in the gold set, unlike StableToolBench's api_list).
 *
 * Its structure and queries: docs/envs.md.
 */
import { createRng } from '../../core/rng';
import type { Rng } from '../../core/rng';
import { makeFunctionName } from './toolDoc';
import type { QueryLevel, RepoQuery, ToolCollection, ToolDocument, ToolParam, ToolRepository } from './types';

/** [category, 8 subjects, 8 input parameters, 8 output fields], `;`-separated. */
const CATEGORY_SPECS: readonly (readonly [string, string, string, string])[] = [
  [
    'Advertising',
    'ad campaign;ad creative;audience segment;keyword bid;ad impression;conversion event;publisher placement;affiliate link',
    'campaign id;advertiser name;budget amount;start date;end date;target country;device type;keyword',
    'click count;impression count;cost per click;conversion rate;total spend;campaign status;audience size;reach estimate',
  ],
  [
    'Artificial_Intelligence_Machine_Learning',
    'text completion;image caption;sentiment prediction;embedding vector;classification model;object label;chatbot reply;speech transcript',
    'prompt text;model name;temperature;max length;image url;language;top k;input text',
    'generated text;confidence score;label;token count;vector;probability;latency;model version',
  ],
  [
    'Business',
    'company profile;business registration;industry report;competitor;supplier;revenue figure;executive contact;office location',
    'company name;registration number;country code;industry code;year;city;domain;employee range',
    'legal name;founding year;revenue;employee count;headquarters address;industry;website;status',
  ],
  [
    'Business_Software',
    'invoice;customer record;sales lead;project task;support ticket;calendar meeting;time entry;crm deal',
    'account id;customer email;due date;priority;assignee;project name;status filter;page number',
    'record id;owner;amount;stage;created date;updated date;status;notes',
  ],
  [
    'Commerce',
    'product listing;price quote;shopping cart;coupon;merchant;inventory level;order receipt;shipping rate',
    'product sku;merchant id;quantity;postal code;currency;coupon code;product category;max price',
    'unit price;stock level;discount;total cost;merchant name;delivery estimate;tax amount;availability',
  ],
  [
    'Communication',
    'phone number;voice call;chat message;contact card;conference room;fax document;push notification;caller identity',
    'phone number;country code;message body;recipient;sender id;language;duration;callback url',
    'carrier;line type;delivery status;message id;call duration;timestamp;caller name;cost',
  ],
  [
    'Cryptography',
    'hash digest;encryption key;digital signature;certificate;random token;password strength;encoded payload;checksum',
    'plain text;algorithm;key size;encoding;secret key;salt;iterations;output format',
    'digest;cipher text;public key;signature;validity;entropy bits;fingerprint;expiry date',
  ],
  [
    'Cybersecurity',
    'malware scan;ip reputation;vulnerability;phishing url;data breach;threat indicator;firewall rule;ssl report',
    'ip address;url;file hash;domain;email address;severity;scan depth;port',
    'risk score;threat type;detection count;first seen;last seen;country;is malicious;recommendation',
  ],
  [
    'Data',
    'dataset;data record;public statistic;country fact;postal region;random profile;public holiday;famous quote',
    'dataset id;country;year;field name;limit;offset;search term;format',
    'rows;column names;value;source;updated date;record count;unit;description',
  ],
  [
    'Database',
    'database table;sql query;stored document;backup snapshot;schema definition;table index;replication status;connection pool',
    'database name;table name;query string;document id;region;snapshot id;limit;filter expression',
    'row count;columns;execution time;document body;size bytes;status;created date;primary key',
  ],
  [
    'Devices',
    'smart device;thermostat setting;sensor reading;firmware update;battery status;device location;iot gateway;camera feed',
    'device id;serial number;firmware version;temperature setpoint;interval;mode;zone;api token',
    'device status;reading value;battery level;signal strength;last seen;installed version;coordinates;error code',
  ],
  [
    'eCommerce',
    'product review;store product;seller rating;order tracking;wishlist;best seller;product variant;return request',
    'product id;asin;store domain;keyword;sort by;page;country;min rating',
    'title;price;rating;review count;seller;images;availability;shipping cost',
  ],
  [
    'Education',
    'course;university;exam result;vocabulary word;lesson plan;student grade;scholarship;math problem',
    'subject;grade level;university name;country;student id;course code;language;difficulty',
    'course title;instructor;credits;score;ranking;tuition fee;definition;solution steps',
  ],
  [
    'Email',
    'email address;mailbox;email message;mailing list;email template;bounce report;disposable domain;mail server',
    'email address;domain;subject line;sender;recipient list;template id;start date;limit',
    'is valid;mx records;deliverability;message id;open rate;bounce reason;is disposable;smtp response',
  ],
  [
    'Energy',
    'electricity price;solar forecast;fuel price;carbon intensity;power plant;charging station;energy consumption;grid outage',
    'region code;latitude;longitude;date;fuel type;capacity;postal code;interval',
    'price per kwh;output kw;emission factor;station name;connector type;consumption kwh;outage count;timestamp',
  ],
  [
    'Entertainment',
    'joke;trivia question;horoscope;meme;comic strip;celebrity;riddle;fun fact',
    'category;difficulty;zodiac sign;date;celebrity name;language;count;safe mode',
    'text;answer;author;image url;rating;birth date;net worth;tags',
  ],
  [
    'Events',
    'concert;conference;festival;ticket listing;venue;meetup;event schedule;rsvp',
    'city;start date;end date;event type;venue id;artist name;radius;price range',
    'event name;venue name;date time;ticket price;organizer;attendee count;seat map;url',
  ],
  [
    'Finance',
    'stock quote;exchange rate;market index;company earning;dividend;option chain;crypto price;fund holding',
    'ticker symbol;base currency;target currency;exchange;interval;start date;end date;amount',
    'open price;close price;volume;change percent;market cap;rate;eps;dividend yield',
  ],
  [
    'Financial',
    'loan;mortgage rate;credit score;tax rate;bank account;iban;inflation rate;retirement plan',
    'principal amount;interest rate;term months;country;iban number;state;income;age',
    'monthly payment;apr;total interest;bank name;swift code;is valid;rate percent;projected balance',
  ],
  [
    'Food',
    'recipe;restaurant;ingredient;nutrition fact;menu item;wine pairing;meal plan;grocery product',
    'cuisine;ingredient list;diet;calories max;city;barcode;servings;meal type',
    'title;ingredients;instructions;calories;protein grams;rating;address;price level',
  ],
  [
    'Gaming',
    'game;player profile;match history;leaderboard;game item;esports tournament;game server;achievement',
    'player name;platform;region;game id;season;match id;rank tier;limit',
    'username;level;win rate;kills;rank;item name;prize pool;server status',
  ],
  [
    'Health_and_Fitness',
    'workout;exercise;body mass index;calorie burn;sleep record;step count;yoga pose;heart rate',
    'weight kg;height cm;age;gender;activity level;muscle group;duration minutes;date',
    'bmi value;calories;sets;repetitions;heart rate bpm;sleep hours;category;instructions',
  ],
  [
    'Jobs',
    'job posting;salary estimate;company review;resume;job skill;internship;remote job;career path',
    'job title;location;experience level;company name;employment type;salary min;skills;date posted',
    'title;employer;salary range;description;apply url;posted date;rating;requirements',
  ],
  [
    'Location',
    'ip geolocation;address;time zone;country;city;postal code;coordinate;nearby place',
    'ip address;street address;latitude;longitude;country code;city name;radius;place type',
    'country name;region;city;latitude;longitude;timezone;postal code;distance',
  ],
  [
    'Logistics',
    'package tracking;shipment;freight quote;warehouse;courier;delivery route;customs declaration;container',
    'tracking number;carrier code;origin postal code;destination postal code;weight;dimensions;ship date;container number',
    'status;location;estimated delivery;events;carrier name;cost;transit days;signed by',
  ],
  [
    'Mapping',
    'map tile;route;geocode result;static map;elevation;isochrone;traffic incident;point of interest',
    'origin;destination;zoom level;latitude;longitude;travel mode;bounding box;language',
    'distance;duration;polyline;image url;elevation meters;address;incidents;coordinates',
  ],
  [
    'Media',
    'podcast;radio station;video channel;media file;press photo;audiobook;live stream;media kit',
    'channel id;title;language;genre;country;duration;format;url',
    'title;publisher;duration;thumbnail url;view count;published date;episodes;stream url',
  ],
  [
    'Medical',
    'drug;disease;symptom;clinical trial;hospital;doctor;medical code;lab test',
    'drug name;condition;symptom list;icd code;zip code;specialty;age;gender',
    'indications;side effects;dosage;diagnosis;probability;trial phase;address;reference range',
  ],
  [
    'Monitoring',
    'website uptime;server metric;ssl certificate;domain expiry;api latency;log entry;alert;status page',
    'url;hostname;check interval;metric name;start time;end time;threshold;region',
    'is up;response time ms;status code;cpu percent;days remaining;error count;alert level;checked at',
  ],
  [
    'Movies',
    'movie;tv show;actor;movie review;box office;streaming availability;trailer;episode',
    'title;release year;imdb id;genre;country;actor name;language;page',
    'title;plot;rating;runtime;cast;gross revenue;platforms;release date',
  ],
  [
    'Music',
    'song;artist;album;lyric;music chart;playlist;audio feature;record label',
    'track name;artist name;album id;genre;country;chart date;limit;isrc',
    'title;artist;duration;release date;popularity;lyrics text;tempo;label',
  ],
  [
    'News_Media',
    'news article;headline;news source;trending topic;press release;opinion column;breaking alert;article summary',
    'keyword;source id;language;country;category;from date;to date;page size',
    'title;author;published at;url;summary;source name;image url;sentiment',
  ],
  [
    'Other',
    'random number;unique identifier;color palette;placeholder text;fake name;countdown;unit conversion;barcode image',
    'min value;max value;count;format;hex color;text length;from unit;to unit',
    'value;values;hex codes;text;name;seconds remaining;converted amount;image url',
  ],
  [
    'Payments',
    'payment;refund;payment link;card validation;subscription;payout;invoice payment;transaction',
    'amount;currency;card number;customer id;payment method;description;transaction id;webhook url',
    'payment id;status;fee;net amount;card brand;is valid;created at;receipt url',
  ],
  [
    'Reward',
    'loyalty point;gift card;reward catalog;cashback offer;referral bonus;voucher;reward redemption;member tier',
    'member id;points amount;brand;country;gift card value;offer id;email;currency',
    'balance;redemption code;expiry date;offer title;cashback percent;tier name;status;value',
  ],
  [
    'Science',
    'chemical element;planet;asteroid;earthquake;species;gene;physical constant;satellite position',
    'element symbol;planet name;date;magnitude min;latitude;longitude;species name;gene id',
    'atomic mass;distance au;diameter km;magnitude;depth km;taxonomy;sequence;value',
  ],
  [
    'Search',
    'web search result;image search result;news search result;autocomplete suggestion;knowledge panel;shopping result;video search result;local business result',
    'query;country;language;safe search;page;num results;location;time range',
    'title;link;snippet;position;thumbnail;source;total results;related searches',
  ],
  [
    'SMS',
    'sms message;verification code;sms campaign;sender id;inbound message;delivery report;virtual number;short code',
    'phone number;message text;sender name;country code;code length;campaign id;schedule time;callback url',
    'message id;delivery status;cost;segments;verification status;received at;number;carrier',
  ],
  [
    'Social',
    'social post;user profile;follower;hashtag;comment;story;trend;influencer',
    'username;user id;hashtag;post id;platform;count;cursor;since date',
    'followers count;likes;comments count;caption;engagement rate;verified;bio;posted at',
  ],
  [
    'Sports',
    'match score;team;player statistic;league table;fixture;betting odd;sports venue;injury report',
    'team name;league id;season;match date;player name;sport;round;country',
    'home score;away score;standings position;points;goals;assists;odds;kickoff time',
  ],
  [
    'Storage',
    'file upload;storage bucket;file share link;folder;file version;storage quota;object metadata;archive',
    'bucket name;file path;file size;expiration hours;folder id;region;access level;content type',
    'file url;size bytes;checksum;created at;quota used;version id;mime type;status',
  ],
  [
    'Text_Analysis',
    'sentiment score;keyword extraction;named entity;language detection;text summary;readability score;profanity check;grammar correction',
    'text;language;max keywords;model;url;summary length;encoding;threshold',
    'sentiment label;score;keywords;entities;detected language;summary;corrected text;is profane',
  ],
  [
    'Tools',
    'qr code;short link;pdf document;web screenshot;generated password;file conversion;page metadata;regex test',
    'url;text;width;height;output format;length;include symbols;pattern',
    'image url;short url;file url;size;password;title;is valid;matches',
  ],
  [
    'Translation',
    'translation;supported language;language pair;transliteration;dictionary entry;glossary term;document translation;pronunciation',
    'source text;source language;target language;document url;word;formality;glossary id;dialect',
    'translated text;detected language;confidence;definitions;synonyms;audio url;characters billed;languages',
  ],
  [
    'Transportation',
    'bus schedule;train connection;flight status;vehicle information;ride estimate;parking spot;transit stop;fuel station',
    'route number;station name;flight number;vin;pickup location;dropoff location;departure time;city',
    'arrival time;departure time;delay minutes;platform;fare;make model;available spaces;status',
  ],
  [
    'Travel',
    'hotel;flight offer;airport;car rental;visa requirement;tourist attraction;vacation package;travel advisory',
    'destination;check in date;check out date;guests;origin airport;departure date;nationality;budget',
    'name;price per night;rating;airline;duration;address;requirements;advisory level',
  ],
  [
    'Video_Images',
    'image;video;thumbnail;animated gif;stock photo;image resize;video download;watermark',
    'image url;video url;width;height;format;quality;query;start time',
    'url;width;height;duration;file size;format;resolution;download link',
  ],
  [
    'Visual_Recognition',
    'face;detected object;ocr text;image tag;logo;explicit content rating;license plate;landmark',
    'image url;image base64;min confidence;max results;language;region of interest;model version;return attributes',
    'bounding box;label;confidence;text;age estimate;emotion;plate number;landmark name',
  ],
  [
    'Weather',
    'weather forecast;current weather;air quality;uv index;weather alert;historical weather;pollen count;marine forecast',
    'city;latitude;longitude;date;units;days;language;postal code',
    'temperature;humidity;wind speed;precipitation;pressure;condition;aqi;alert description',
  ],
];

/** The 49 category names of the generator (RapidAPI's list). */
export const GENERATED_CATEGORIES: readonly string[] = CATEGORY_SPECS.map((s) => s[0]);

interface ActionSpec {
  key: string;
  /** API-name patterns: `{S}` = subject in PascalCase, `{s}` = camelCase. */
  apiNames: readonly string[];
  /** Description patterns: `{noun}`, `{plural}`, `{inputs}`, `{outputs}`. */
  descriptions: readonly string[];
  /** Query clause patterns: `{noun}`, `{plural}`, `{givens}`, `{wants}`. */
  intents: readonly string[];
}

const ACTIONS: readonly ActionSpec[] = [
  {
    key: 'search',
    apiNames: ['search{S}s', 'find{S}s', '{s}Search'],
    descriptions: [
      'Search {plural} by {inputs}. Returns {outputs}.',
      'Find {plural} matching {inputs}; each result lists {outputs}.',
      'Look up {plural} using {inputs} and get {outputs}.',
    ],
    intents: [
      'find {plural} for {givens} and show their {wants}',
      'I am looking for {plural} where {givens}; I need the {wants}',
      'which {plural} match {givens}? Give me the {wants}',
    ],
  },
  {
    key: 'details',
    apiNames: ['get{S}Details', '{s}Info', 'fetch{S}'],
    descriptions: [
      'Get the details of one {noun} identified by {inputs}, including {outputs}.',
      'Fetch full information about a single {noun} from {inputs}: {outputs}.',
      'Detailed record of a {noun} for the given {inputs}, with {outputs}.',
    ],
    intents: [
      'tell me everything about the {noun} with {givens}, especially the {wants}',
      'I need the {wants} of the {noun} with {givens}',
      'pull up the full record of the {noun} for {givens} ({wants})',
    ],
  },
  {
    key: 'list',
    apiNames: ['list{S}s', 'all{S}s', 'get{S}List'],
    descriptions: [
      'List all {plural}, filtered by {inputs}. Each item has {outputs}.',
      'Returns a paginated list of {plural} for {inputs} with {outputs}.',
      'Enumerate available {plural} given {inputs}; fields: {outputs}.',
    ],
    intents: [
      'show me all the {plural} for {givens} with their {wants}',
      'give me a complete list of {plural} given {givens}, including {wants}',
      'enumerate every {noun} available for {givens} and its {wants}',
    ],
  },
  {
    key: 'stats',
    apiNames: ['get{S}Statistics', '{s}Stats', '{s}Analytics'],
    descriptions: [
      'Aggregate statistics about {plural} (counts, averages, trends) for {inputs}: {outputs}.',
      'Summary metrics over {plural} given {inputs}, reporting {outputs}.',
      'Analytics on {plural} for {inputs} with totals and averages of {outputs}.',
    ],
    intents: [
      'how many {plural} are there for {givens}, and what are the average {wants}',
      'summarize the numbers on {plural} for {givens}: totals and averages of {wants}',
      'I want aggregate figures about {plural} for {givens}, such as {wants}',
    ],
  },
  {
    key: 'create',
    apiNames: ['create{S}', 'add{S}', 'new{S}'],
    descriptions: [
      'Create a new {noun} from {inputs} and return {outputs}.',
      'Register a {noun} with {inputs}; responds with {outputs}.',
      'Submit a new {noun} using {inputs}. The response contains {outputs}.',
    ],
    intents: [
      'set up a new {noun} with {givens} and tell me the {wants}',
      'please register a {noun} using {givens}; afterwards report the {wants}',
      'open a fresh {noun} for {givens} and return its {wants}',
    ],
  },
  {
    key: 'compare',
    apiNames: ['compare{S}s', '{s}Comparison', 'diff{S}s'],
    descriptions: [
      'Compare two or more {plural} side by side using {inputs}; shows {outputs}.',
      'Side-by-side comparison of {plural} by {inputs} with differences in {outputs}.',
      'Rank several {plural} against each other for {inputs} on {outputs}.',
    ],
    intents: [
      'weigh several {plural} against each other for {givens} on their {wants}',
      'put a few {plural} side by side given {givens} and contrast the {wants}',
      'which {noun} is better for {givens}? compare their {wants}',
    ],
  },
  {
    key: 'history',
    apiNames: ['get{S}History', '{s}Timeline', 'historical{S}s'],
    descriptions: [
      'Historical {plural} over a date range for {inputs}, with {outputs} per period.',
      'Past records of {plural} by {inputs}; a time series of {outputs}.',
      'Timeline of {plural} for {inputs}, returning {outputs} for each entry.',
    ],
    intents: [
      'what did the {plural} look like in the past for {givens}? I want the {wants} over time',
      'go back in time: the earlier {plural} for {givens} with their {wants}',
      'trace how the {plural} changed over the past months for {givens}, {wants} included',
    ],
  },
  {
    key: 'validate',
    apiNames: ['validate{S}', 'check{S}', 'verify{S}'],
    descriptions: [
      'Validate a {noun} given {inputs}; reports {outputs}.',
      'Check whether a {noun} is valid for {inputs} and return {outputs}.',
      'Verify a {noun} with {inputs}. Output: {outputs}.',
    ],
    intents: [
      'confirm whether the {noun} is valid for {givens} and report the {wants}',
      'is the {noun} for {givens} legitimate? I need the {wants}',
      'double-check the {noun} with {givens} and tell me the {wants}',
    ],
  },
];

const BRAND_HEADS = [
  'Nim',
  'Zen',
  'Qua',
  'Lum',
  'Vex',
  'Ora',
  'Tri',
  'Kai',
  'Sol',
  'Bry',
  'Cor',
  'Dex',
  'Eon',
  'Fyn',
  'Gal',
  'Hex',
  'Iri',
  'Jov',
  'Kor',
  'Lyr',
  'Mav',
  'Nov',
  'Opt',
  'Pix',
  'Quo',
  'Rho',
  'Syn',
  'Tav',
  'Ume',
  'Vor',
  'Wex',
  'Xan',
  'Yor',
  'Zyl',
];
const BRAND_TAILS = ['bus', 'ly', 'io', 'ra', 'net', 'hub', 'ify', 'ex', 'on', 'ix', 'da', 'mo'];
const TOOL_SUFFIXES = ['API', 'Service', 'Pro', 'Hub', 'Data', 'Live'];
const COLLECTION_WORDS = ['Essentials', 'Toolkit', 'Starter Pack', 'Suite', 'Bundle', 'Workbench', 'Kit', 'Stack'];
const VALUE_SYLLABLES = ['ka', 'lo', 'mi', 'ra', 'ten', 'vo', 'shi', 'dar', 'el', 'quin', 'bo', 'sa', 'ny', 'tor'];
/** Words that open every clause of a multi-tool query after the first (the search teacher splits on them). */
export const QUERY_CONNECTORS = ['Also, ', 'Then ', 'After that, ', 'In addition, ', 'Finally, '];
/** Openings a query may start with (not part of any tool's clause). */
export const QUERY_PREFACES = [
  '',
  'I am working on a small project. ',
  'Quick request: ',
  'For a report I am preparing, ',
  'Hi! ',
];

export interface GeneratedRepoOptions {
  seed: number;
  /** Minimum number of tool documents (APIs). Default 10,000. */
  minTools?: number;
  /** Number of categories used, the first n of the 49. Default 49. */
  categories?: number;
  /** Number of collections. Default 60. */
  collections?: number;
  /** Queries generated per level. Default 100. */
  queriesPerLevel?: number;
}

interface GenTool {
  toolName: string;
  category: string;
  subjectIndex: number;
  apiIds: string[];
}

interface CategoryVocab {
  name: string;
  subjects: string[];
  params: string[];
  outputs: string[];
}

function pick<T>(rng: Rng, items: readonly T[]): T {
  return items[rng.int(items.length)];
}

/** k distinct items, in random order (partial Fisher–Yates on a copy). */
function sample<T>(rng: Rng, items: readonly T[], k: number): T[] {
  const copy = [...items];
  const n = Math.min(k, copy.length);
  for (let i = 0; i < n; i++) {
    const j = i + rng.int(copy.length - i);
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy.slice(0, n);
}

/** Integer in [lo, hi]. */
function drawInt(rng: Rng, lo: number, hi: number): number {
  return lo + rng.int(hi - lo + 1);
}

function pluralize(phrase: string): string {
  const words = phrase.split(' ');
  const last = words[words.length - 1];
  let plural: string;
  if (/[^aeiou]y$/.test(last)) plural = `${last.slice(0, -1)}ies`;
  else if (/(s|x|z|ch|sh)$/.test(last)) plural = `${last}es`;
  else plural = `${last}s`;
  return [...words.slice(0, -1), plural].join(' ');
}

function toPascalCase(phrase: string): string {
  return phrase
    .split(/\s+/)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');
}

function toTitleCase(phrase: string): string {
  return phrase
    .split(/\s+/)
    .map((w) =>
      w.length <= 3 && /^(sms|ip|ssl|api|iot|crm|uv|tv|qr|pdf|gif|ocr|sql|iban)$/.test(w)
        ? w.toUpperCase()
        : w.charAt(0).toUpperCase() + w.slice(1),
    )
    .join(' ');
}

function joinList(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

function fillTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (_, key: string) => values[key] ?? `{${key}}`);
}

/** A JSON-schema-ish type for a parameter, from its name. */
function inferParamType(param: string): string {
  if (/\b(latitude|longitude|temperature|rate|amount|price|threshold|confidence|weight|height)\b/.test(param))
    return 'number';
  if (
    /\b(count|limit|page|size|days|year|age|length|quantity|guests|servings|radius|capacity|duration|interval|iterations|offset|min|max|level|months|hours|round|season|zoom|width|port|top k)\b/.test(
      param,
    )
  ) {
    return 'integer';
  }
  if (/^(is |include |safe )/.test(param)) return 'boolean';
  return 'string';
}

/** A plausible value for a parameter, as query text. */
function drawParamValue(rng: Rng, param: string): string {
  if (param.includes('date'))
    return `2024-${String(drawInt(rng, 1, 12)).padStart(2, '0')}-${String(drawInt(rng, 1, 28)).padStart(2, '0')}`;
  if (param.includes('time'))
    return `${String(drawInt(rng, 0, 23)).padStart(2, '0')}:${pick(rng, ['00', '15', '30', '45'])}`;
  if (param.includes('email')) return `${pick(rng, VALUE_SYLLABLES)}${pick(rng, VALUE_SYLLABLES)}@example.com`;
  if (param.includes('url')) return `https://example.com/${pick(rng, VALUE_SYLLABLES)}${drawInt(rng, 1, 99)}`;
  const type = inferParamType(param);
  if (type === 'number') return (drawInt(rng, 1, 9000) / 100).toFixed(2);
  if (type === 'integer') return String(drawInt(rng, 1, 50));
  if (type === 'boolean') return pick(rng, ['true', 'false']);
  if (/(id|number|code|symbol|sku|asin|vin|isrc|iban|hash|token|key)$/.test(param)) {
    const chars = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
    let code = '';
    for (let i = 0; i < 6; i++) code += chars[rng.int(chars.length)];
    return code;
  }
  const word = `${pick(rng, VALUE_SYLLABLES)}${pick(rng, VALUE_SYLLABLES)}${pick(rng, VALUE_SYLLABLES)}`;
  return word.charAt(0).toUpperCase() + word.slice(1);
}

function toParamName(param: string): string {
  const parts = param.split(' ');
  return (
    parts[0] +
    parts
      .slice(1)
      .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
      .join('')
  );
}

/** Builds the repository; the same options give the same repository. */
export function generateToolRepo(options: GeneratedRepoOptions): ToolRepository {
  const minTools = options.minTools ?? 10_000;
  const nCategories = Math.max(1, Math.min(options.categories ?? CATEGORY_SPECS.length, CATEGORY_SPECS.length));
  const nCollections = options.collections ?? 60;
  const queriesPerLevel = options.queriesPerLevel ?? 100;
  const root = createRng(`toolRepo/${options.seed}`);
  const toolRng = root.split('tools');
  const collectionRng = root.split('collections');
  const queryRng = root.split('queries');

  const vocab: CategoryVocab[] = CATEGORY_SPECS.slice(0, nCategories).map(([name, subjects, params, outputs]) => ({
    name,
    subjects: subjects.split(';'),
    params: params.split(';'),
    outputs: outputs.split(';'),
  }));

  const docs: ToolDocument[] = [];
  const docIndex = new Map<
    string,
    { doc: ToolDocument; action: ActionSpec; subject: string; requiredPhrases: string[] }
  >();
  const tools: GenTool[] = [];
  const usedToolNames = new Set<string>();
  const paramCache = new Map<string, ToolParam>();

  for (let t = 0; docs.length < minTools; t++) {
    const cat = vocab[t % vocab.length];
    const subjectIndex = toolRng.int(cat.subjects.length);
    const subject = cat.subjects[subjectIndex];
    const brand = `${pick(toolRng, BRAND_HEADS)}${pick(toolRng, BRAND_TAILS)}`;
    const baseName = `${brand} ${toTitleCase(subject)} ${pick(toolRng, TOOL_SUFFIXES)}`;
    let toolName = baseName;
    for (let v = 2; usedToolNames.has(toolName); v++) toolName = `${baseName} v${v}`;
    usedToolNames.add(toolName);
    const tool: GenTool = { toolName, category: cat.name, subjectIndex, apiIds: [] };
    const actions = sample(toolRng, ACTIONS, drawInt(toolRng, 3, 6));
    for (const action of actions) {
      const variant = toolRng.int(3);
      const apiName = fillTemplate(action.apiNames[variant], {
        S: toPascalCase(subject),
        s: toPascalCase(subject).charAt(0).toLowerCase() + toPascalCase(subject).slice(1),
      });
      const paramPick = sample(toolRng, cat.params, drawInt(toolRng, 2, 5));
      const nRequired = drawInt(toolRng, 1, Math.min(3, paramPick.length - 1));
      const toParam = (p: string): ToolParam => {
        const key = `${subject}|${p}`;
        let param = paramCache.get(key);
        if (!param) {
          param = { name: toParamName(p), type: inferParamType(p), description: `The ${p} of the ${subject}.` };
          paramCache.set(key, param);
        }
        return { ...param };
      };
      const required = paramPick.slice(0, nRequired).map(toParam);
      const optional = paramPick.slice(nRequired).map(toParam);
      const outputFields = sample(toolRng, cat.outputs, drawInt(toolRng, 3, 5));
      const outputs: Record<string, unknown> = {};
      for (const field of outputFields)
        outputs[field.replace(/ /g, '_')] = inferParamType(field) === 'string' ? 'str' : 'float';
      // (outputs are typed from their names: numbers as float, everything else as str)
      const description = fillTemplate(action.descriptions[toolRng.int(action.descriptions.length)], {
        noun: subject,
        plural: pluralize(subject),
        inputs: joinList(paramPick.slice(0, nRequired)),
        outputs: joinList(outputFields),
      });
      const name = makeFunctionName(apiName, toolName, Number.POSITIVE_INFINITY); // tool names are unique: no truncation, no clash
      const doc: ToolDocument = {
        id: name,
        name,
        apiName,
        toolName,
        category: cat.name,
        description,
        requiredParameters: required,
        optionalParameters: optional,
        outputs,
        method: action.key === 'create' ? 'POST' : 'GET',
        family: `${cat.name}/${subject}/${action.key}`,
      };
      docs.push(doc);
      docIndex.set(name, { doc, action, subject, requiredPhrases: paramPick.slice(0, nRequired) });
      tool.apiIds.push(name);
    }
    tools.push(tool);
  }

  const toolsByCategory = new Map<string, GenTool[]>();
  for (const tool of tools) {
    const group = toolsByCategory.get(tool.category);
    if (group) group.push(tool);
    else toolsByCategory.set(tool.category, [tool]);
  }

  const collections: ToolCollection[] = [];
  const usedCollectionNames = new Set<string>();
  for (let c = 0; c < nCollections && vocab.length >= 2; c++) {
    const cats = sample(collectionRng, vocab, drawInt(collectionRng, 2, Math.min(4, vocab.length))).map((v) => v.name);
    const members: string[] = [];
    for (const cat of cats) {
      for (const tool of sample(collectionRng, toolsByCategory.get(cat) ?? [], drawInt(collectionRng, 4, 8))) {
        members.push(tool.toolName);
      }
    }
    const baseName = `${cats.map((x) => x.split('_')[0]).join(' & ')} ${pick(collectionRng, COLLECTION_WORDS)}`;
    let name = baseName;
    for (let v = 2; usedCollectionNames.has(name); v++) name = `${baseName} ${v}`;
    usedCollectionNames.add(name);
    collections.push({ name, toolNames: members, categories: [...cats].sort() });
  }
  const toolByName = new Map(tools.map((t) => [t.toolName, t]));

  const writeClause = (rng: Rng, id: string): string => {
    const { doc, action, subject, requiredPhrases } = docIndex.get(id)!;
    const givens = joinList(requiredPhrases.map((phrase) => `${phrase} ${drawParamValue(rng, phrase)}`));
    const outputFields = Object.keys(doc.outputs ?? {}).map((k) => k.replace(/_/g, ' '));
    const wants = joinList(sample(rng, outputFields, drawInt(rng, 1, 2)));
    return fillTemplate(pick(rng, action.intents), { noun: subject, plural: pluralize(subject), givens, wants });
  };

  const writeQuery = (rng: Rng, goldIds: readonly string[]): string => {
    const clauses = goldIds.map((id, i) => {
      const clause = writeClause(rng, id);
      const prefix =
        i === 0
          ? ''
          : i === goldIds.length - 1 && goldIds.length > 2
            ? 'Finally, '
            : pick(rng, QUERY_CONNECTORS.slice(0, 4));
      const sentence = prefix ? `${prefix}${clause}` : clause.charAt(0).toUpperCase() + clause.slice(1);
      return /[?.]$/.test(sentence) ? sentence : `${sentence}.`;
    });
    const preface = pick(rng, QUERY_PREFACES);
    const text = clauses.join(' ');
    return preface
      ? `${preface}${preface.endsWith(': ') || preface.endsWith(', ') ? text.charAt(0).toLowerCase() + text.slice(1) : text}`
      : text;
  };

  const queries: RepoQuery[] = [];
  const addQuery = (level: QueryLevel, index: number, goldIds: string[], rng: Rng) => {
    const categories = [...new Set(goldIds.map((id) => docIndex.get(id)!.doc.category))].sort();
    queries.push({
      id: `gen:${options.seed}:${level}:${index}`,
      text: writeQuery(rng, goldIds),
      level,
      goldToolIds: goldIds,
      relevantToolIds: [...goldIds],
      goldCategories: categories,
    });
  };

  const singleRng = queryRng.split('single_tool');
  for (let i = 0; i < queriesPerLevel; i++) {
    const tool = pick(singleRng, tools);
    addQuery(
      'single_tool',
      i,
      sample(singleRng, tool.apiIds, drawInt(singleRng, 1, Math.min(3, tool.apiIds.length))),
      singleRng,
    );
  }

  const categoryRng = queryRng.split('intra_category');
  const categoriesWithTools = vocab.map((v) => v.name).filter((c) => (toolsByCategory.get(c)?.length ?? 0) >= 2);
  for (let i = 0; i < queriesPerLevel && categoriesWithTools.length > 0; i++) {
    const category = pick(categoryRng, categoriesWithTools);
    const inCategory = toolsByCategory.get(category)!;
    // Prefer tools of different subjects, so the query asks for different functions.
    const bySubject = new Map<number, GenTool[]>();
    for (const tool of inCategory)
      bySubject.set(tool.subjectIndex, [...(bySubject.get(tool.subjectIndex) ?? []), tool]);
    const subjects = sample(categoryRng, [...bySubject.keys()], drawInt(categoryRng, 2, 3));
    const chosen =
      subjects.length >= 2
        ? subjects.map((s) => pick(categoryRng, bySubject.get(s)!))
        : sample(categoryRng, inCategory, 2);
    addQuery(
      'intra_category',
      i,
      chosen.map((t) => pick(categoryRng, t.apiIds)),
      categoryRng,
    );
  }

  const collectionQueryRng = queryRng.split('intra_collection');
  const usableCollections = collections.filter((c) => c.categories.length >= 2 && c.toolNames.length >= 2);
  for (let i = 0; i < queriesPerLevel && usableCollections.length > 0; i++) {
    const collection = pick(collectionQueryRng, usableCollections);
    const cats = sample(
      collectionQueryRng,
      collection.categories,
      drawInt(collectionQueryRng, 2, Math.min(3, collection.categories.length)),
    );
    const chosen = cats.map((cat) => {
      const members = collection.toolNames.map((n) => toolByName.get(n)!).filter((t) => t.category === cat);
      return pick(collectionQueryRng, members);
    });
    addQuery(
      'intra_collection',
      i,
      chosen.map((t) => pick(collectionQueryRng, t.apiIds)),
      collectionQueryRng,
    );
  }

  return {
    source: `generated:${options.seed}`,
    tools: docs,
    categories: [...new Set(docs.map((d) => d.category))].sort(),
    collections,
    queries,
  };
}
