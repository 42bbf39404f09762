import type { Prng } from './prng.js';

// The simulator's word lists: works, people, places and phrases the generators draw from.

export const WORKS: readonly (readonly [string, string | null])[] = [
  ['The Magic Flute', 'La Flûte enchantée'],
  ['La Bohème', 'La Bohème'],
  ['Swan Lake', 'Le Lac des cygnes'],
  ['Hamlet', 'Hamlet'],
  ['The Nutcracker', 'Casse-Noisette'],
  ['Carmen', 'Carmen'],
  ['Giselle', 'Giselle'],
  ["A Midsummer Night's Dream", "Le Songe d'une nuit d'été"],
  ['The Cherry Orchard', 'La Cerisaie'],
  ['Tosca', null],
  ['Don Giovanni', null],
  ['Romeo and Juliet', 'Roméo et Juliette'],
  ['The Seagull', 'La Mouette'],
  ['Macbeth', null],
  ['Coppélia', 'Coppélia'],
  ['The Marriage of Figaro', 'Les Noces de Figaro'],
  ['Uncle Vanya', 'Oncle Vania'],
  ['Twelfth Night', 'La Nuit des rois'],
  ['Rigoletto', null],
  ['Madama Butterfly', null],
  ['The Tempest', 'La Tempête'],
  ['Peer Gynt', null],
  ['Eugene Onegin', 'Eugène Onéguine'],
  ['Fidelio', null],
  ['Dido and Aeneas', 'Didon et Énée'],
  ['The Firebird', "L'Oiseau de feu"],
  ['Petrushka', 'Petrouchka'],
  ['Hedda Gabler', null],
  ["A Doll's House", 'Une maison de poupée'],
  ['The Rite of Spring', 'Le Sacre du printemps'],
  ['Gianni Schicchi', null],
  ['La Traviata', null],
  ['The Pirates of Penzance', null],
  ['Cinderella', 'Cendrillon'],
  ['The Sleeping Beauty', 'La Belle au bois dormant'],
  ['Messiah', 'Le Messie'],
];
export const SERIES_NAMES = [
  'Opera Essentials',
  'Ballet at the Harbour',
  'Chamber Sundays',
  'New Voices',
  'Family Matinees',
  'Late Night Jazz',
  'Shakespeare Unbound',
  'Contemporary Dance',
  'Baroque Evenings',
  'Symphonic Highlights',
  'Studio Premieres',
  'Gala Nights',
];
export const PEOPLE = [
  'Amara Okafor',
  'Lucien Moreau',
  'Hannah Whitfield',
  'Kenji Tanaka',
  'Sofia Marchetti',
  'Daniel Kowalski',
  'Priya Raman',
  'Élodie Laurent',
  'Marcus Bell',
  'Ingrid Solberg',
  'Tomás Álvarez',
  'Grace Adeyemi',
];
export const ROLES = ['Conductor', 'Director', 'Choreographer', 'Soloist', 'Designer', 'Lighting Designer'];
export const ORG_WORDS = [
  'Ensemble',
  'Company',
  'Collective',
  'Players',
  'Quartet',
  'Chorus',
  'Orchestra',
  'Dance Theatre',
];
export const ORG_PLACES = [
  'Harbour',
  'Northern',
  'Riverside',
  'Meridian',
  'Lantern',
  'Silver Birch',
  'Eastgate',
  'Aurora',
];
export const VENUE_WORDS = ['Theatre', 'Opera House', 'Concert Hall', 'Studio', 'Playhouse', 'Music Room', 'Pavilion'];
export const BLOG_NAMES = [
  'Backstage',
  'Programme Notes',
  'From the Pit',
  'Company News',
  'Rehearsal Diaries',
  'Learning',
];
export const PAGE_NAMES = [
  'About',
  'Plan your visit',
  'Access',
  'Support us',
  'Membership',
  'Education',
  'Contact',
  'History',
  'Our people',
  'Hire a space',
  'Press',
  'Careers',
];
export const POST_TOPICS = [
  'Meet the cast of',
  'Five things to know about',
  'Behind the scenes of',
  'Designing',
  'A conductor on',
  'Why we are staging',
  'Rehearsal notes:',
];
export const CATEGORY_WORDS = [
  'Design',
  'Music',
  'Dance',
  'Community',
  'Heritage',
  'Wildlife',
  'Architecture',
  'Rehearsal',
];

export interface City {
  city: string;
  country: string;
  state: string;
  tz: string;
  /** A postal code of the city, drawn from the generator's PRNG. */
  postal: (prng: Prng) => string;
  street: readonly string[];
}
export const CITIES: readonly City[] = [
  {
    city: 'London',
    country: 'GB',
    state: '',
    tz: 'Europe/London',
    postal: (prng) => `SE1 ${prng.int(1, 9)}${prng.pick(['AB', 'NT', 'XZ', 'PL'])}`,
    street: ['Waterloo Road', 'The Cut', 'Upper Ground', 'Floral Street'],
  },
  {
    city: 'Manchester',
    country: 'GB',
    state: '',
    tz: 'Europe/London',
    postal: (prng) => `M${prng.int(1, 4)} ${prng.int(1, 9)}BN`,
    street: ['Quay Street', 'Peter Street', 'Oxford Road'],
  },
  {
    city: 'New York',
    country: 'US',
    state: 'NY',
    tz: 'America/New_York',
    postal: (prng) => `100${prng.int(10, 40)}`,
    street: ['Broadway', 'West 65th Street', 'Lafayette Street'],
  },
  {
    city: 'Chicago',
    country: 'US',
    state: 'IL',
    tz: 'America/Chicago',
    postal: (prng) => `606${prng.int(0, 9)}${prng.int(0, 9)}`,
    street: ['North Wacker Drive', 'South Michigan Avenue'],
  },
  {
    city: 'Los Angeles',
    country: 'US',
    state: 'CA',
    tz: 'America/Los_Angeles',
    postal: (prng) => `900${prng.int(10, 99)}`,
    street: ['Grand Avenue', 'South Hope Street'],
  },
  {
    city: 'Paris',
    country: 'FR',
    state: '',
    tz: 'Europe/Paris',
    postal: (prng) => `750${String(prng.int(1, 20)).padStart(2, '0')}`,
    street: ["Place de l'Opéra", 'Rue de Lyon', 'Boulevard Saint-Michel'],
  },
  {
    city: 'Montréal',
    country: 'CA',
    state: 'QC',
    tz: 'America/Toronto',
    postal: (prng) => `H2X ${prng.int(1, 9)}Y${prng.int(1, 9)}`,
    street: ['Rue Sainte-Catherine Ouest', 'Boulevard Saint-Laurent'],
  },
  {
    city: 'Sydney',
    country: 'AU',
    state: 'NSW',
    tz: 'Australia/Sydney',
    postal: () => '2000',
    street: ['Bennelong Point', 'George Street'],
  },
];

export const DESCRIPTIONS = [
  'A new production with a stellar cast and live orchestra.',
  'Returning by popular demand after a sold-out run.',
  'An intimate staging that brings the audience close to the action.',
  'Sung in the original language with surtitles.',
  'Suitable for ages 8 and up; running time about two hours with one interval.',
  'A co-production with partners across three countries.',
];
export const DESCRIPTIONS_FR = [
  'Une nouvelle production avec une distribution éclatante et un orchestre live.',
  'De retour à la demande générale après des représentations complètes.',
  null,
  'Chanté en langue originale avec surtitres.',
  null,
  'Une coproduction avec des partenaires de trois pays.',
];
