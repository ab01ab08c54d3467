"""The toy world's templates: topics, names, places and slot tables, as pure data.

Thirteen topics (banking, fishing, cooking, football, cricket, astronomy, medicine, music,
farming, computing, sailing, mountains, trains), each a ``Topic``: the roles and
organisations a document may give its person, the opening, body and closing sentence
templates, and the word lists that fill the other slots. Every sentence and word list was
written for this project; nothing is copied from other text. ``minibert.data.corpus`` turns
these templates into documents; ``minibert.data.probes`` lists the words that mean different
things in different topics.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = [
    "FEMALE_NAMES",
    "MALE_NAMES",
    "ORGANISATION_NAMES",
    "PERSON_NAMES",
    "PLACE_NAMES",
    "PRONOUNS",
    "SHARED_SLOTS",
    "TOPICS",
    "TOPIC_TABLE",
    "Topic",
]


@dataclass(frozen=True)
class Topic:
    """Everything the generator needs to write documents about one topic.

    Templates are ``str.format`` strings. The slots ``name``, ``friend``, ``place``, ``org``,
    ``role`` and the pronouns ``he``/``He``/``him``/``his`` are fixed for a whole document
    (the recurring entities); any other slot is drawn afresh from ``slots`` each sentence.
    """

    roles: tuple[str, ...]
    organisations: tuple[str, ...]
    slots: dict[str, tuple[str, ...]]
    openings: tuple[str, ...]
    body: tuple[str, ...]
    closings: tuple[str, ...]


FEMALE_NAMES: tuple[str, ...] = (
    "Mara", "Ines", "Priya", "Lena", "Nadia", "Rosa", "Elena", "Hana", "Greta", "Clara",
    "Alma", "Vera", "Ida", "Nora", "Tessa", "Yara", "Leila", "Mina", "Ruth", "Sofia",
    "Amara", "Freya", "Lucia", "Zara", "Iris", "Olga", "Petra", "Maya", "Dina", "Talia",
    "Agnes", "Bianca", "Celia", "Edith", "Fiona", "Gemma", "Helga", "Jana", "Kira", "Marta",
)
"""First names of a person written about as she/her."""

MALE_NAMES: tuple[str, ...] = (
    "Tomas", "Ravi", "Jonas", "Omar", "Felix", "Hugo", "Marco", "Anton", "Emil", "Luca",
    "Samir", "Viktor", "Oscar", "Bruno", "Kofi", "Nils", "Pavel", "Arjun", "Tariq", "Milo",
    "Leon", "Ezra", "Caleb", "Ivan", "Dario", "Kenji", "Mateo", "Elias", "Rafael", "Theo",
    "Albert", "Boris", "Cyril", "Dmitri", "Edwin", "Gustav", "Henrik", "Jasper", "Lorenzo",
    "Magnus",
)
"""First names of a person written about as he/him."""

PERSON_NAMES: tuple[str, ...] = FEMALE_NAMES + MALE_NAMES
"""Every first name a document may give its person or the friend (female names first)."""

PLACE_NAMES: tuple[str, ...] = (
    "Elmford", "Ashby", "Brackwater", "Dunmore", "Fernhill", "Glenrock", "Hollowmere",
    "Kingsbridge", "Larkfield", "Millbrook", "Northwick", "Oakridge", "Pinecrest", "Redcliff",
    "Stonehaven", "Thornbury", "Westmoor", "Willowdale", "Yarrow", "Ravensholm", "Amberley",
    "Bramwell", "Coldharbour", "Eastbury", "Foxton", "Greystoke", "Hartwell", "Lowfield",
    "Marlow", "Sandholme",
)
"""Every town a document may be set in."""

# Slots every topic may use, drawn afresh each sentence like a topic's own slots.
SHARED_SLOTS: dict[str, tuple[str, ...]] = {
    "when": (
        "at dawn", "early in the morning", "before lunch", "in the afternoon", "in the evening",
        "late at night", "on a cold morning", "on a warm evening", "after breakfast",
        "at the weekend",
    ),
    "weather": (
        "in the rain", "under a grey sky", "in bright sunshine", "in a strong wind", "in the fog",
        "in the snow",
    ),
    "feeling": ("proud", "tired", "nervous", "calm", "excited", "worried", "cheerful", "curious"),
    "manner": ("slowly", "carefully", "quickly", "quietly", "patiently", "gently"),
}
# A template's pronoun slots he/He/him/his -> the words for a female or a male person.
PRONOUNS: dict[str, dict[str, str]] = {
    "female": {"he": "she", "He": "She", "him": "her", "his": "her"},
    "male": {"he": "he", "He": "He", "him": "him", "his": "his"},
}

_BANKING = Topic(
    roles=("a clerk", "a young accountant", "a shop owner", "a retired teacher", "a tailor"),
    organisations=(
        "the Northgate Bank", "the Harbour Savings Bank", "the Union Bank", "the Crown Bank",
        "the Merchants Bank",
    ),
    slots={
        "amount": (
            "fifty pounds", "two hundred pounds", "a thousand pounds", "forty dollars",
            "three hundred dollars", "ninety pounds", "five hundred dollars",
        ),
        "purchase": ("a small house", "a new van", "a bakery", "a shop", "a piano", "a car"),
        "goal": ("a new roof", "a holiday", "retirement", "a wedding", "university"),
        "weekday": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday"),
    },
    openings=(
        "{name} worked as {role} in {place} and kept {his} savings at {org}.",
        "Every {weekday}, {name} walked to {org} in the centre of {place}.",
        "{name} had opened an account at {org} when {he} first moved to {place}.",
    ),
    body=(
        "{He} deposited {amount} at the bank before noon.",
        "The bank lent {name} {amount} to buy {purchase}.",
        "At the bank, the cashier counted the notes twice.",
        "{name} paid a twenty pound note into {his} savings account.",
        "The note was worth ten pounds, so {name} kept it in {his} wallet.",
        "{friend}, the manager of the bank, checked the interest on the loan.",
        "Interest rates at the bank rose again that spring.",
        "{name} asked the bank for a loan of {amount}.",
        "The bank charged a small fee for every transfer.",
        "{He} withdrew {amount} from the cash machine outside the bank.",
        "{name} checked {his} balance and saw that the deposit had cleared.",
        "The cashier at {org} gave {name} a receipt for the deposit.",
        "Every month, {name} saved {amount} for {goal}.",
        "The bank sent {name} a letter about the mortgage.",
        "{name} signed the loan papers in the manager's office.",
        "The vault of the bank was locked every night at six.",
        "{friend} warned {name} that the debt would grow with every missed payment.",
        "{He} kept the key to {his} safe deposit box in a drawer at home.",
        "The bank raised the interest on savings accounts.",
        "With the money from the loan, {name} bought {purchase}.",
        "The bank statement showed {amount} in {name}'s account.",
        "Shares in the bank fell sharply after the annual report.",
        "{name} invested {amount} in a fund that paid interest twice a year.",
        "The bank manager smiled and approved the loan.",
        "{He} exchanged {his} old notes for new ones at the counter.",
        "{name} felt {feeling} when {he} read the letter from the bank.",
        "{when}, a queue of customers formed outside {org}.",
        "The clerk stamped the cheque and filed it in a drawer.",
        "{friend} borrowed {amount} from {name} and promised to repay it by {weekday}.",
        "The auditors inspected the ledgers of {org} {when}.",
        "Inflation made the pension of {name}'s grandmother worth less each year.",
        "{He} compared the mortgage offers of three banks before choosing one.",
        "The branch of {org} in {place} closed early on {weekday}.",
        "Coins, cheques and banknotes were sorted {manner} in the back office.",
    ),
    closings=(
        "By the end of the year, {name} had paid back the whole loan.",
        "{name} left {org} happy, knowing {his} savings were safe.",
        "In the end, {name} was glad {he} had trusted {org} with {his} money.",
    ),
)

_FISHING = Topic(
    roles=("an angler", "a fisherman", "a boat builder", "a ferry keeper", "a river guide"),
    organisations=(
        "the river Alder", "the river Wend", "the river Tamsin", "the river Orrin",
        "the river Dovey",
    ),
    slots={
        "fish": ("trout", "bass", "pike", "salmon", "carp", "perch", "eel", "roach"),
        "bait": ("worms", "maggots", "bread", "a small fly", "sweetcorn", "a silver spinner"),
    },
    openings=(
        "{name} was {role} who fished {org} near {place}.",
        "Every weekend, {name} took {his} rod down to {org}.",
        "{name} grew up in {place}, a village on {org}.",
    ),
    body=(
        "{name} sat on the muddy bank of the river with {his} rod.",
        "The river had flooded the low bank near the old mill.",
        "From the grassy bank, {he} cast {his} line into the deep pool.",
        "A grey crane stood in the shallows, waiting for fish.",
        "The crane caught a small fish with its long beak.",
        "{name} caught a large {fish} just after dawn.",
        "The bass pulled hard on the line, and {name} reeled it in slowly.",
        "{He} scraped the scales off the {fish} with a knife.",
        "The current was strong near the weir, so {name} moved upstream.",
        "{friend} rowed a small boat across the river to join {him}.",
        "{He} baited the hook with {bait} and waited.",
        "The water was cold and clear after the spring rain.",
        "Otters played near the far bank of the river.",
        "{name} released the {fish} back into the water.",
        "Willows leaned over the river bank, and their roots held the soil.",
        "The fishing licence cost {name} a few pounds at the tackle shop.",
        "Mist rose from the river as the sun came up.",
        "A heron and a crane waded slowly along the bank.",
        "{name} walked along the bank until {he} found a quiet spot under the trees.",
        "Reeds grew thick along the river, and ducks nested among them.",
        "The river ran fast past the muddy bank.",
        "{name}'s float bobbed twice, and a {fish} took the bait.",
        "{name} tied {his} boat to the bank of the river and climbed out.",
        "{when}, {name} waded into the shallow water {weather}.",
        "A kingfisher flashed blue above the water and dived for minnows.",
        "{He} untangled the line {manner} while {friend} laughed.",
        "The water level dropped during the dry summer, exposing stones and gravel.",
        "Dragonflies hovered over the lily pads near the weir.",
        "{name} kept a record of every {fish} {he} caught in a battered notebook.",
        "The old ferry crossed the river twice an hour.",
        "Trout rose to snatch insects from the surface of the pool.",
    ),
    closings=(
        "At dusk, {name} packed {his} rod and walked home along the river.",
        "{name} promised {friend} that they would fish {org} again soon.",
        "That evening, {name} cooked a {fish} over a small fire by the river.",
    ),
)

_COOKING = Topic(
    roles=("a cook", "a chef", "a baker", "a student who loved food", "a kitchen porter"),
    organisations=(
        "the Copper Pot", "the Blue Door", "the Olive Tree", "the Golden Spoon",
        "the Old Kitchen",
    ),
    slots={
        "dish": (
            "soup", "stew", "bread", "pie", "curry", "risotto", "pancakes", "omelette",
            "roast chicken", "fish cakes",
        ),
        "veg": (
            "onions", "carrots", "garlic", "potatoes", "leeks", "peppers", "mushrooms",
            "tomatoes", "beans", "spinach",
        ),
        "spice": ("pepper", "salt", "cumin", "thyme", "basil", "ginger", "paprika", "rosemary"),
    },
    openings=(
        "{name} was {role} at {org}, a small restaurant in {place}.",
        "{name} loved to cook, and {his} kitchen in {place} was always busy.",
        "On Sunday, {name} invited {friend} to dinner at {his} flat in {place}.",
    ),
    body=(
        "{He} struck a match and lit the old gas stove.",
        "The match flared, and the oven began to warm.",
        "{name} chopped the {veg} and dropped them into a hot pan.",
        "{He} stirred the {dish} with a wooden spoon.",
        "The recipe called for a pinch of {spice} and two cups of flour.",
        "{name} weighed the flour on the kitchen scale.",
        "{friend} washed the dishes while {name} tasted the sauce.",
        "The {dish} needed another ten minutes in the oven.",
        "The kitchen smelled of {spice} and fresh bread.",
        "{name} served the {dish} to the guests at {org}.",
        "A pot of water boiled on the stove while {he} peeled the {veg}.",
        "{name} kneaded the dough and left it to rise by the window.",
        "The guests praised the {dish} and asked for the recipe.",
        "{He} added {spice} to the sauce and let it simmer.",
        "After the meal, {name} wiped the counter and sharpened the knives.",
        "{friend} brought fresh {veg} from the market in {place}.",
        "The cake rose nicely, and {name} dusted it with sugar.",
        "{He} lit the candles on the table with a long match.",
        "The soup was too salty, so {name} added more water and {veg}.",
        "Fresh herbs from the spring garden went into the salad.",
        "The fish had silver scales, which {name} removed before cooking.",
        "{name}'s apron was covered in flour by the end of the morning.",
        "{when}, {name} baked two dozen loaves for the market.",
        "{He} whisked the eggs {manner} and poured them into the pan.",
        "The butter melted, and the pastry turned golden and crisp.",
        "{friend} grated cheese over the pasta and set the table.",
        "{name} roasted the lamb with honey, lemon and {spice}.",
        "A jar of homemade jam stood on the shelf above the sink.",
        "The restaurant critic from {place} ordered the {dish} and smiled.",
        "{name} tasted the broth and added a squeeze of lime.",
    ),
    closings=(
        "Everyone agreed that the {dish} was the best {name} had ever made.",
        "Late that night, {name} cleaned the kitchen and went to bed happy.",
        "{name} wrote the recipe in a notebook so {he} could cook it again.",
    ),
)

_FOOTBALL = Topic(
    roles=("a striker", "a goalkeeper", "a coach", "a defender", "a young midfielder"),
    organisations=(
        "the Harbour Rovers", "the City Lions", "the Valley Wanderers", "the United Foxes",
        "the Athletic Hawks",
    ),
    slots={
        "rival": ("the Northern Stags", "the Red Falcons", "the Park Rangers", "the County Wolves"),
        "minute": ("the tenth minute", "the last minute", "the second half", "extra time"),
        "score": ("two goals to one", "three goals to nil", "one goal each", "four goals to two"),
    },
    openings=(
        "{name} played as {role} for {org}, the football club of {place}.",
        "{name} had dreamed of playing for {org} since {he} was a child in {place}.",
        "{name} joined {org} as {role} at the start of the season.",
    ),
    body=(
        "The players walked onto the muddy pitch before kickoff.",
        "Rain had soaked the pitch, and the ball skidded across the grass.",
        "The groundsman rolled the pitch and painted the white lines.",
        "{name} scored in {minute} against {rival}.",
        "The match ended {score}, and the fans cheered.",
        "Before the match, the coach spoke to the team in the dressing room.",
        "{name} was the star of the team that season.",
        "The crowd sang as the star striker ran toward the goal.",
        "{friend} passed the ball to {name} on the edge of the box.",
        "The referee blew the whistle and showed a yellow card.",
        "{He} trained every morning with the squad at the stadium.",
        "The goalkeeper dived and saved a penalty in {minute}.",
        "Fans in {place} waited outside the stadium for {name}.",
        "A corner kick curled into the net, and {name} shouted with joy.",
        "The coach moved {name} to the left wing in the second half.",
        "After the final whistle, the players shook hands on the pitch.",
        "Tickets for the match against {rival} sold out in an hour.",
        "{name} injured {his} ankle in a tackle and limped off the pitch.",
        "The league table showed {org} in second place.",
        "{name} signed a new contract with {org} in the spring.",
        "{name}'s header hit the crossbar, and the crowd groaned.",
        "{when}, the squad practised penalties {weather}.",
        "The transfer fee for {name} broke the club record.",
        "Supporters waved scarves and banners in the colours of {org}.",
        "The physio strapped {name}'s knee before the warm up.",
        "{name} felt {feeling} before the derby against {rival}.",
        "The captain lifted the trophy, and confetti filled the air.",
        "A late offside flag cancelled the equaliser.",
    ),
    closings=(
        "When the season ended, {name} was named player of the year.",
        "{name} and {friend} celebrated the win with the fans of {org}.",
        "That night, {name} watched the goals again on television.",
    ),
)

_CRICKET = Topic(
    roles=("a batsman", "a bowler", "a wicket keeper", "the captain"),
    organisations=(
        "the Valley Cricket Club", "the Riverside Eleven", "the County Cricket Club",
        "the Village Eleven",
    ),
    slots={
        "rival": ("the Hill Eleven", "the Town Cricket Club", "the Abbey Eleven"),
        "number": ("ten", "twenty", "thirty", "eight", "forty"),
    },
    openings=(
        "{name} was {role} for {org} in {place}.",
        "Every summer, {name} played cricket for {org} on the village green in {place}.",
        "{name} had been {role} for {org} for six seasons.",
    ),
    body=(
        "{name} picked up {his} bat and walked out to the crease.",
        "The bat cracked as {name} hit the ball over the boundary.",
        "{He} oiled {his} willow bat before the match.",
        "The bowler ran in fast, and the ball bounced high off the pitch.",
        "The pitch was dry and cracked, which helped the spin bowlers.",
        "{name} scored fifty runs before lunch.",
        "The umpire raised a finger, and the batsman walked off.",
        "{friend} caught the ball at the edge of the field.",
        "Rain stopped the match for an hour after tea.",
        "The captain set the field and handed the ball to {name}.",
        "{name} bowled three overs without conceding a run.",
        "Spectators clapped politely from the pavilion.",
        "With a swing of the bat, {name} sent the ball into the stands.",
        "The match against {rival} lasted five days.",
        "{He} wore pads and gloves to face the fast bowling.",
        "The ground staff covered the pitch while the team took tea in the pavilion.",
        "{name} was out caught for twelve and threw {his} bat down in anger.",
        "The scoreboard showed that they needed {number} runs to win.",
        "{name}'s new bat was made of light willow.",
        "{when}, the openers walked out {weather}.",
        "The fielders crouched in the slips, waiting for an edge.",
        "{name} polished the ball on {his} trousers before each delivery.",
        "The umpire signalled a six, and the scorer updated the board.",
        "Lunch was sandwiches and lemonade in the clubhouse.",
        "{name} felt {feeling} as {he} faced the first ball of the innings.",
    ),
    closings=(
        "When the last wicket fell, {org} had won by {number} runs.",
        "{name} carried {his} bat back to the pavilion as the crowd cheered.",
        "Later, {name} and {friend} talked about the match over a cold drink.",
    ),
)

_ASTRONOMY = Topic(
    roles=("an astronomer", "a student of physics", "a telescope maker", "an amateur astronomer"),
    organisations=(
        "the Hilltop Observatory", "the Northern Observatory", "the Royal Observatory",
        "the Clearwater Observatory",
    ),
    slots={
        "planet": ("Mars", "Jupiter", "Saturn", "Venus", "the moon"),
        "constellation": ("Orion", "the Plough", "Cassiopeia", "Lyra", "Cygnus"),
    },
    openings=(
        "{name} was {role} at {org}, high above {place}.",
        "On clear nights, {name} climbed the hill to {org} outside {place}.",
        "{name} had spent ten years at {org} studying the night sky.",
    ),
    body=(
        "Through the telescope, {name} saw a bright star near {constellation}.",
        "The star was a red giant, far older than the sun.",
        "{He} measured the light from the star for three nights.",
        "{name} pointed the telescope at {planet} just after midnight.",
        "The sky was clear, and thousands of stars shone above the dome.",
        "A comet with a long tail appeared low in the west.",
        "{friend} wrote down the position of each star in a notebook.",
        "The moon rose, and its glow hid the faint galaxies.",
        "{name} explained that a planet shines by reflected light.",
        "{He} cooled the camera so that it could record faint stars.",
        "The observatory dome opened slowly with a loud hum.",
        "Clouds rolled in, and {name} had to wait for the sky to clear.",
        "{He} used a star chart to find {constellation}.",
        "The orbit of {planet} was easy to follow over several weeks.",
        "A shooting star streaked across the sky, and {friend} gasped.",
        "{name} calculated the distance to the star from its parallax.",
        "The telescope mirror was cleaned and polished every spring.",
        "The old telescope mount had a steel spring that held the tube steady.",
        "{name}'s photographs of {constellation} were printed in the journal.",
        "The nebula glowed faintly in the long exposure.",
        "{when}, {name} adjusted the focus {manner}.",
        "An eclipse of the moon was expected in three weeks.",
        "The spectrum of the light revealed hydrogen and helium.",
        "Satellites crossed the field of view and spoiled some images.",
        "{name} felt {feeling} when the first images of {planet} appeared on the screen.",
        "The astronomers gathered in the library to discuss the supernova.",
    ),
    closings=(
        "Before dawn, {name} closed the dome and drove home to {place}.",
        "{name} sent the results to the journal, and {friend} helped with the charts.",
        "{name} would never forget that night at {org}.",
    ),
)

_MEDICINE = Topic(
    roles=("a nurse", "a doctor", "a surgeon", "a pharmacist", "a medical student"),
    organisations=(
        "the General Hospital", "the Riverside Clinic", "the Children's Hospital",
        "the Hillside Clinic",
    ),
    slots={
        "illness": (
            "a fever", "a broken arm", "a bad cough", "a sprained ankle", "pneumonia",
            "a sore throat", "an infection",
        ),
        "medicine": ("antibiotics", "painkillers", "cough syrup", "an ointment", "vitamins"),
        "patient": ("an old farmer", "a young boy", "a tired mother", "a sailor", "a teacher"),
    },
    openings=(
        "{name} worked as {role} at {org} in {place}.",
        "{name} had trained for many years before joining {org}.",
        "{name} was {role} who had looked after the people of {place} for years.",
    ),
    body=(
        "{name} checked the pulse of {patient} with {illness}.",
        "The doctor weighed the child on the scale in the clinic.",
        "{He} wrote a note for the pharmacist with the dose of {medicine}.",
        "{friend} took an x ray of the patient's arm.",
        "The ward was quiet during the night shift.",
        "{name} washed {his} hands before every examination.",
        "The nurse gave the patient {medicine} twice a day.",
        "{He} listened to the patient's chest with a stethoscope.",
        "The surgeon operated on the broken leg for three hours.",
        "{name} explained the treatment to the worried family.",
        "The fever broke after two days, and the patient smiled again.",
        "Blood tests showed that the infection was getting worse.",
        "{name} checked the blood pressure of every patient on the ward.",
        "The ambulance arrived at {org} just after midnight with {patient}.",
        "{He} bandaged the wound and told the patient to rest.",
        "Every spring, the clinic gave vaccines to the children of {place}.",
        "The pharmacist counted the tablets and wrote the dose on the label.",
        "{name} was tired after a long shift, but {he} stayed to help {friend}.",
        "{name}'s notes on each patient were short and clear.",
        "{when}, the emergency room was crowded with patients.",
        "{name} sterilised the instruments and prepared the operating theatre.",
        "The thermometer showed that {patient} had a high temperature.",
        "{He} spoke {manner} to calm the frightened child.",
        "The midwife delivered twins early in the morning.",
        "An allergy to penicillin was written on the patient's chart.",
        "{name} felt {feeling} while waiting for the scan results.",
    ),
    closings=(
        "When the shift ended, {name} walked home through the quiet streets of {place}.",
        "{name} was proud of the care {he} gave at {org}.",
        "A week later, the patient came back to thank {name}.",
    ),
)

_MUSIC = Topic(
    roles=("a singer", "a pianist", "a drummer", "a violinist", "a music teacher"),
    organisations=(
        "the Silver Owls", "the Blue Lanterns", "the Paper Kites", "the Velvet Foxes",
        "the Morning Choir",
    ),
    slots={
        "instrument": ("piano", "violin", "guitar", "drums", "cello", "flute", "trumpet"),
        "song": ("a folk song", "a love song", "an old ballad", "a waltz", "a lullaby"),
        "musical_key": ("C major", "G minor", "D major", "A minor", "E flat"),
    },
    openings=(
        "{name} was {role} in {org}, a band from {place}.",
        "{name} had loved music since {he} first heard {org} play in {place}.",
        "{name} joined {org} as {role} after leaving school in {place}.",
    ),
    body=(
        "{name} played the bass guitar in {org}.",
        "The deep bass of the cello filled the hall.",
        "The singer could not reach the high note at the end of the song.",
        "{He} held the final note for ten seconds, and the audience cheered.",
        "The song was written in the key of {musical_key}.",
        "{friend} changed the key of the song so that {name} could sing it.",
        "{name} tuned {his} {instrument} until the pitch was perfect.",
        "The pitch of {his} voice rose as {he} sang the chorus.",
        "Every morning, {name} practised scales on the piano.",
        "{He} played a scale in {musical_key} to warm up.",
        "The drummer kept a steady beat while the crowd danced.",
        "{org} recorded a new album in a studio in {place}.",
        "{name} became a pop star after {his} first single reached the charts.",
        "The star of the show signed autographs after the concert.",
        "{name} wrote {song} for {his} grandmother.",
        "The concert hall in {place} was full for the first night of the tour.",
        "{friend} played the {instrument} solo, and the audience stood up.",
        "The band rehearsed for hours before the concert.",
        "{name} read the sheet music and counted the beats.",
        "The conductor raised a baton, and the orchestra began to play.",
        "{He} pressed the keys of the piano softly.",
        "{name}'s voice was low, so {he} sang the bass part in the choir.",
        "{when}, the choir rehearsed in the chapel.",
        "The audience applauded when the violinist bowed.",
        "{name} felt {feeling} before the first concert of the tour.",
        "{friend} composed a melody on an old harmonica.",
        "The drummer counted in, and the guitars joined the rhythm.",
        "The festival stage glowed with purple and orange lights.",
        "{He} practised {manner} until the tricky passage sounded smooth.",
    ),
    closings=(
        "At the end of the night, {name} packed up the {instrument} and smiled.",
        "{org} played one last song, and {name} thanked the crowd.",
        "{name} went home humming the tune.",
    ),
)

_FARMING = Topic(
    roles=("a farmer", "a shepherd", "a beekeeper", "a farm hand"),
    organisations=("Hollow Farm", "Oak Tree Farm", "Greenacre Farm", "Mill Farm", "Brook Farm"),
    slots={
        "crop": ("wheat", "barley", "potatoes", "apples", "corn", "oats", "turnips"),
        "animal": ("sheep", "cows", "goats", "pigs", "hens", "horses"),
    },
    openings=(
        "{name} was {role} at {org}, just outside {place}.",
        "{org} had belonged to {name}'s family for a hundred years.",
        "{name} moved from {place} to work as {role} at {org}.",
    ),
    body=(
        "In spring, {name} planted {crop} in the long field behind the barn.",
        "The spring lambs were born in the barn during a cold week.",
        "When spring came, the fields turned green and the {animal} went out to graze.",
        "{He} milked the cows before sunrise.",
        "A bat flew out of the barn at dusk, hunting moths.",
        "Bats roosted in the old barn, and {name} left them alone.",
        "The tractor broke down in the middle of the field.",
        "{friend} helped {name} bring in the {crop} before the rain.",
        "The {animal} needed fresh water and hay every morning.",
        "{name} sold eggs and cheese at the market in {place}.",
        "{He} repaired the fence so that the {animal} could not escape.",
        "A crane landed in the wet meadow to hunt for frogs.",
        "The harvest was good that year, and the barns were full of {crop}.",
        "{name} drove the tractor to the mill with a load of {crop}.",
        "The dog rounded up the sheep on the hill.",
        "{name} checked the beehives and collected the honey.",
        "Heavy rain flooded the lower field near the stream.",
        "Water from a spring near the farm filled the trough.",
        "{name}'s old dog slept by the stove in the farmhouse.",
        "{when}, {name} fed the {animal} {weather}.",
        "The orchard was heavy with pears and plums in late summer.",
        "{He} sheared the sheep and packed the wool into sacks.",
        "A fox crept toward the henhouse, but the geese raised the alarm.",
        "{friend} mended the roof of the stable with new slates.",
        "The plough turned the dark soil into neat furrows.",
        "{name} felt {feeling} when the vet arrived to examine the calf.",
    ),
    closings=(
        "As the sun set over {org}, {name} closed the gate and went inside.",
        "{name} and {friend} sat by the fire after the long day on the farm.",
        "By autumn, {name} had saved enough to buy another tractor.",
    ),
)

_COMPUTING = Topic(
    roles=("a programmer", "an engineer", "a student", "a network administrator"),
    organisations=("Brightbyte", "Nimbus Systems", "Quartz Labs", "Pixel Forge", "Orbit Software"),
    slots={
        "language": ("Python", "C", "Java", "Rust", "Fortran"),
        "part": ("the memory", "the disk", "the processor", "the fan", "the screen", "the battery"),
    },
    openings=(
        "{name} was {role} at {org}, a software company in {place}.",
        "{name} had built {his} first computer at the age of twelve in {place}.",
        "{name} joined {org} as {role} after studying in {place}.",
    ),
    body=(
        "{name} pressed a key on the keyboard, and the screen came to life.",
        "The escape key on {his} keyboard was stuck.",
        "{He} stored the secret key for the encryption in a safe file.",
        "{name} wrote a program in {language} to sort the data.",
        "The server crashed at midnight, and {friend} was called to fix it.",
        "{He} found a bug in the code and fixed it before lunch.",
        "The laptop would not start because {part} had failed.",
        "A surge of current burned out the power supply.",
        "{name} measured the current flowing through the circuit.",
        "The network was slow because too many users were online.",
        "{He} backed up every file to an external disk.",
        "{name} compiled the program and ran the tests again.",
        "The database stored millions of records for {org}.",
        "{friend} reviewed the code and suggested a faster algorithm.",
        "{name} restarted the computer and installed the update.",
        "The password was too short, so the system rejected it.",
        "{He} typed a command into the terminal and waited.",
        "The new chip doubled the speed of the computer.",
        "{name} designed a website for a small bank in {place}.",
        "{name}'s program could scale to millions of users.",
        "{when}, {name} debugged the code {manner}.",
        "The spreadsheet calculated the salaries of every employee.",
        "A virus infected the email server and deleted several folders.",
        "{friend} drew a diagram of the architecture on the whiteboard.",
        "The robot followed instructions from a simple algorithm.",
        "{name} felt {feeling} when the program finally compiled without errors.",
        "The printer jammed, and {name} pulled out the crumpled paper.",
    ),
    closings=(
        "When the project was finished, {name} shut down the computer and went home.",
        "{org} released the new software, and {name} was proud of it.",
        "{name} and {friend} celebrated the launch with pizza.",
    ),
)

_SAILING = Topic(
    roles=("a sailor", "a captain", "a dock worker", "a harbour pilot", "a deck hand"),
    organisations=(
        "the Sea Swallow", "the Morning Star", "the Grey Gull", "the Northern Light",
        "the Saltwind",
    ),
    slots={"cargo": ("timber", "coal", "grain", "wool", "salt", "steel")},
    openings=(
        "{name} was {role} on {org}, a ship that sailed from {place}.",
        "{name} had sailed {org} out of {place} for many years.",
        "{name} signed on as {role} aboard {org} in the port of {place}.",
    ),
    body=(
        "At the port, a tall crane lifted the crates of {cargo} onto the deck.",
        "The crane swung the heavy containers onto the ship.",
        "The harbour crane broke down, so the crew unloaded the {cargo} by hand.",
        "{name} raised the sails and steered the boat out of the harbour.",
        "A strong current pushed the boat toward the rocks.",
        "The wind filled the sails, and the boat leaned over.",
        "{He} tied the rope to the mast with a tight knot.",
        "{friend} checked the compass and set a course for the island.",
        "Waves crashed over the bow during the storm.",
        "The anchor dropped into the deep water with a splash.",
        "{name} navigated by the stars when the compass failed.",
        "Seagulls circled above the fishing boats in the bay.",
        "The crew of {org} loaded {cargo} at dawn.",
        "{name} steered away from the sand bank at the mouth of the bay.",
        "The tide was low, so {name} waited in the harbour until noon.",
        "{He} checked the weather report before the long voyage.",
        "The lighthouse flashed its warning across the dark sea.",
        "Salt spray covered the deck, and {name} wiped {his} eyes.",
        "{name}'s cabin was small, but it had a window over the sea.",
        "{when}, the ship left port {weather}.",
        "Dolphins swam beside the hull for an hour.",
        "The navigator plotted the route on a chart with a pencil and ruler.",
        "{He} hauled the net aboard {manner}, and the crew cheered.",
        "{name} felt {feeling} as the coastline disappeared behind them.",
        "A whale spouted in the distance, and the passengers rushed to the rail.",
        "The cook served porridge and coffee in the galley.",
    ),
    closings=(
        "When {org} reached the harbour, {name} tied up at the quay and went ashore.",
        "After the voyage, {name} and {friend} ate fish stew by the harbour.",
        "{name} knew {he} would go back to sea soon.",
    ),
)

_MOUNTAINS = Topic(
    roles=("a climber", "a mountain guide", "a hiker", "a park ranger"),
    organisations=(
        "Mount Arden", "the Grey Peak", "Mount Kestrel", "the Iron Ridge", "Mount Solace",
    ),
    slots={
        "gear": (
            "a rope", "an ice axe", "a map", "a warm jacket", "a tent", "a compass", "a headlamp",
        ),
    },
    openings=(
        "{name} was {role} who lived in {place}, at the foot of {org}.",
        "{name} had wanted to climb {org} since {he} was a child.",
        "{name} set out from {place} at dawn to climb {org}.",
    ),
    body=(
        "{name} filled {his} bottle at a cold spring below the summit.",
        "Fresh water bubbled from a spring among the rocks.",
        "The spring was frozen, so the climbers melted snow for water.",
        "In a cave near the path, a bat hung upside down from the ceiling.",
        "Hundreds of bats flew out of the cave at dusk.",
        "The bat flapped its wings and vanished into the dark cave.",
        "{name} checked the rope and started to climb the rock face.",
        "Snow covered the ridge, and the wind was bitter.",
        "{friend} led the way up the steep path to the pass.",
        "From the summit, {he} could see the valley and the town of {place}.",
        "The guide packed {gear} and food for three days.",
        "A storm forced them to shelter in a hut below the ridge.",
        "{name} slipped on the ice but caught the rope just in time.",
        "They pitched the tent on a flat ledge above the glacier.",
        "An eagle circled high above the cliffs.",
        "The trail crossed a stream and climbed through the pine forest.",
        "{name} reached the summit of {org} before noon.",
        "At night, the stars over the mountains were bright and clear.",
        "Avalanches were common on {org} in the spring.",
        "{name}'s boots were soaked after crossing the snow field.",
        "{when}, the climbers set off {weather}.",
        "Marmots whistled among the boulders near the lake.",
        "{He} tightened the straps of the rucksack {manner}.",
        "The glacier cracked and groaned in the afternoon heat.",
        "{name} felt {feeling} looking down into the valley.",
        "A rockfall blocked the lower route, so they climbed the gully instead.",
        "Wild goats leapt between the ledges on the northern slope.",
    ),
    closings=(
        "Tired but happy, {name} walked down from {org} to {place}.",
        "{name} wrote about the climb in a diary that night.",
        "{name} and {friend} promised to climb {org} again next year.",
    ),
)

_TRAINS = Topic(
    roles=("a train driver", "a station master", "a guard", "an engineer", "a signal operator"),
    organisations=(
        "the Northern Line", "the Coast Express", "the Valley Railway", "the Night Mail",
        "the Hill Line",
    ),
    slots={"freight": ("coal", "timber", "grain", "cattle", "mail")},
    openings=(
        "{name} was {role} on {org}, which ran through {place}.",
        "{name} had worked on {org} for twenty years.",
        "{name} started as {role} at the station in {place}.",
    ),
    body=(
        "The mechanic replaced a broken spring in the carriage suspension.",
        "A steel spring absorbed the shock when the train stopped.",
        "{name} checked the signal before the train left the station.",
        "The train pulled into {place} station ten minutes late.",
        "Passengers waited on the platform with their bags.",
        "{He} blew the whistle and waved the flag.",
        "The engine hissed, and steam rolled along the platform.",
        "{friend} sold tickets at the window of the booking office.",
        "The driver slowed the train as it crossed the old bridge.",
        "Snow on the tracks delayed the morning service.",
        "{name} inspected the brakes of each carriage.",
        "The guard checked tickets as the train rolled through the valley.",
        "The goods train carried {freight} to the port.",
        "{name} oiled the wheels and tightened the bolts on the engine.",
        "At the junction, the points switched and the train changed tracks.",
        "The sleeper train left at midnight and reached the city by dawn.",
        "A crane lifted the new engine onto the rails.",
        "Every spring, the railway repainted the bridges along {org}.",
        "{name}'s uniform was pressed and {his} cap was clean.",
        "{when}, the express thundered through {place} {weather}.",
        "The conductor punched the tickets of the sleepy passengers.",
        "{name} felt {feeling} as the locomotive climbed the steep gradient.",
        "A child waved from the window of the dining car.",
        "The porter loaded suitcases and parcels into the luggage van.",
        "Sparks flew from the wheels as the brakes squealed.",
        "{He} read the timetable {manner} and announced the delays.",
    ),
    closings=(
        "When the last train had gone, {name} locked the station and walked home.",
        "{name} and {friend} drank tea in the signal box as the sun went down.",
        "{name} loved the sound of the trains at night.",
    ),
)

TOPIC_TABLE: Mapping[str, Topic] = MappingProxyType({
    "banking": _BANKING,
    "fishing": _FISHING,
    "cooking": _COOKING,
    "football": _FOOTBALL,
    "cricket": _CRICKET,
    "astronomy": _ASTRONOMY,
    "medicine": _MEDICINE,
    "music": _MUSIC,
    "farming": _FARMING,
    "computing": _COMPUTING,
    "sailing": _SAILING,
    "mountains": _MOUNTAINS,
    "trains": _TRAINS,
})
"""Topic name -> its ``Topic``, read-only, in the order of ``TOPICS``."""

TOPICS: tuple[str, ...] = tuple(TOPIC_TABLE)
"""The topics of the toy world, in a fixed order."""

ORGANISATION_NAMES: Mapping[str, tuple[str, ...]] = MappingProxyType({
    name: topic.organisations + topic.slots.get("rival", ())
    for name, topic in TOPIC_TABLE.items()
})
"""Topic -> the organisations its documents may name, written as in the sentences
("the Union Bank"): the choices of a document's ``{org}``, then, for football and cricket,
the rival teams. A read-only mapping, keyed in the order of ``TOPICS``."""
