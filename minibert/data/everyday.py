"""The everyday toy world: sixteen scenes of daily life a class talks about, as pure data.

``minibert.data.templates`` holds the ambiguity themes (bank, bat, pitch, ...) that carry the
lecture's story; this module holds the everyday life a room asks about: home, food and
drink, school, work, shopping and money, travel and transport, weather and seasons, animals
and the farm, body and health, family and friends, music and art, sports and games, nature
and the outdoors, the town, time and daily routine, reading and writing. Each scene is a
``Topic`` like the themes (openings, body, closings, slot tables), written in the grammar a
room uses: I, you and we, questions, negation, past, present and future, plurals, -ing forms,
possessives, the punctuation ``? ! ,`` and digits.

Every scene's body also draws from ``minibert.data.words``: sentence frames whose slots are
word lists by part of speech, so that the common words of English each come up often enough
to earn a whole token (docs/data.md gives the coverage and the command that measures it).
Every sentence and list was written for this project; nothing is copied from other text.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from minibert.data.templates import Topic

__all__ = ["EVERYDAY_SCENES", "SCENE_SLOTS", "SCENE_TABLE"]


def _w(text: str) -> tuple[str, ...]:
    """Split a list written one item per line, or words separated by spaces on one line."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if len(lines) == 1:
        return tuple(lines[0].split())
    return tuple(lines)


# Slots every scene may use (each scene's own slots come first, then these, then the word
# lists of minibert.data.words).
SCENE_SLOTS: dict[str, tuple[str, ...]] = {
    "day": _w("Monday Tuesday Wednesday Thursday Friday Saturday Sunday"),
    "month": _w("January February March April May June July August September October "
                "November December"),
    "season": _w("spring summer autumn winter"),
    "digit": _w("2 3 4 5 6 7 8 9"),
    "hour": _w("6 7 8 9 10 11 12 1 2 3 4 5"),
    "number": _w("two three four five six seven eight nine ten twenty"),
    "bignumber": _w("10 12 15 20 25 30 40 50 100 200"),
    "ordinal": _w("first second third fourth fifth 1st 2nd 3rd 4th"),
    "colour": _w("red blue green yellow black white brown orange pink grey"),
    "person": _w("John David James Michael George Paul Peter William Robert Thomas Richard "
                 "Charles Henry Frank Jack Joe Mike Chris Tom Steve Harry Scott Tony Sam Alex "
                 "Daniel Kevin Andrew Adam Ryan Nick Jim Bob Ben Max Dan Tim Matt Edward "
                 "Joseph Mary Kim Grace Jordan Taylor Lee Ray Louis Martin"),
    "surname": _w("Smith Johnson Williams Jones Wilson Jackson Taylor Ford Lee Martin Scott "
                  "Brown Green White"),
    "country": _w("France Germany Spain Italy Japan China India Canada Australia Brazil "
                  "Mexico Ireland Scotland England Wales Russia Turkey Pakistan Korea Iran "
                  "Israel Africa America Europe Asia Britain"),
    "city": _w("London Paris Chicago Sydney Manchester Boston Washington"),
    "relative": _w("mother father sister brother mom dad son daughter wife husband parents "
                   "grandmother uncle aunt cousin baby kids children family"),
    "feel": _w("happy sad tired angry excited worried proud glad afraid scared upset calm "
               "nervous lucky sorry bored hungry busy lonely surprised comfortable"),
    "often": _w("always usually often sometimes never rarely"),
}


_HOME = Topic(
    roles=_w("""
        a student
        a nurse
        a teacher
        a builder
        a cook
        a writer
    """),
    organisations=_w("""
        the flat on Hill Street
        the house by the park
        the small house on Church Lane
        the apartment above the shop
        the old house near the station
    """),
    slots={
        "room": ("kitchen", "bedroom", "bathroom", "living room", "garden", "hall", "garage"),
        "furniture": _w("table chair bed sofa desk shelf lamp mirror cupboard"),
        "chore": _w("""
            washed the dishes
            cleaned the kitchen
            made the bed
            took out the rubbish
            did the washing
            cleaned the windows
            fixed the door
            painted the walls
            watered the plants
            swept the floor
        """),
        "appliance": ("fridge", "oven", "washing machine", "television", "radio", "computer",
                      "heater"),
        "thing": _w("keys phone glasses wallet bag coat shoes book"),
    },
    openings=_w("""
        {name} lived in {org} in {place} with {his} {relative}.
        {name} had just moved into {org} in {place}.
        I live in {org}, and {name} lives next door.
    """),
    body=_w("""
        {name} {chore} after dinner.
        Every Saturday, we {chore} together.
        The {room} was small but warm.
        I can't find my {thing}. Have you seen them?
        {name} left {his} {thing} on the kitchen table.
        There is a new {furniture} in the {room}.
        We sat on the sofa and watched television.
        The {appliance} in the kitchen was broken, so {name} called a man to fix it.
        {name} opened the window to let some fresh air into the room.
        It was cold in the house, so {he} turned on the heater.
        Please close the door when you leave the house.
        Did you lock the front door?
        {name} put the milk and the butter back in the fridge.
        The house has three bedrooms, a kitchen and a small garden.
        The rent for the flat was {bignumber} pounds a week.
        {name} cleaned the bathroom and washed the floor.
        The neighbours were very loud last night.
        Our house is at the end of the street, next to the park.
        {name} is painting the kitchen {colour}.
        The lights went out, and the whole house was dark.
        I'm going to clean my room this afternoon.
        We don't have a garage, so we park the car in the street.
        {friend} came to visit, and {name} made some tea.
        {name} sleeps in the small bedroom at the top of the stairs.
        The keys are in the drawer under the mirror.
        The roof was leaking, and water dripped onto the floor.
        {name}'s cat slept on the bed all afternoon.
        My {relative} bought a new {furniture} for the {room}.
        The walls of the living room were covered with pictures.
        {name} hung {his} coat on a hook by the door.
    """),
    closings=_w("""
        At last the house was clean, and {name} sat down with a cup of tea.
        {name} turned off the lights and went to bed.
        It was good to be home.
    """),
)

_FOOD = Topic(
    roles=_w("""
        a cook
        a waiter
        a baker
        a student
        a farmer
    """),
    organisations=_w("""
        the cafe on Market Street
        the little restaurant by the river
        the pizza place near the station
        the kitchen of the hotel
        the bakery in the square
    """),
    slots={
        "food": _w("bread cheese rice soup pasta chicken fish salad eggs meat potatoes "
                   "vegetables fruit beans pizza cake chocolate sandwiches toast apples "
                   "oranges bananas carrots tomatoes onions butter sugar salt"),
        "hotdrink": _w("tea coffee chocolate soup"),
        "drink": _w("water milk juice tea coffee wine beer lemonade"),
        "meal": _w("breakfast lunch dinner"),
        "taste": _w("sweet salty hot cold delicious fresh spicy bitter"),
        "dish": _w("""
            a bowl of soup
            a plate of pasta
            a piece of cake
            a chicken sandwich
            a cheese sandwich
            a big salad
            fish and chips
            rice and beans
            eggs and toast
        """),
        "container": _w("cup glass bottle bowl plate jug"),
    },
    openings=_w("""
        {name} worked as {role} at {org} in {place}.
        {name} and {friend} had {meal} at {org}.
        Every evening, {name} cooked {meal} for {his} family.
    """),
    body=_w("""
        For {meal}, {name} had {dish}.
        {name} drank a {container} of {drink} with {his} {meal}.
        We had a cup of {hotdrink} and a piece of cake.
        Would you like some more {food}?
        I'm hungry. What's for {meal}?
        The soup was too {taste}, so {name} added some water.
        {name} cut the bread and put some cheese on it.
        We need some {food} and some {food} from the shop.
        {name} cooked {food} and {food} for dinner.
        The waiter brought the menu and a jug of water.
        The cook put the cake in the oven for {bignumber} minutes.
        I don't eat meat, but I love {food}.
        {name} boiled some water and made a pot of tea.
        The kitchen smelled of fresh bread and coffee.
        We eat {meal} together at {hour} o'clock.
        {name} poured a glass of milk for {his} {relative}.
        This cake is delicious! Who made it?
        Can I have a glass of water, please?
        {name} mixed the flour, the eggs and the sugar in a bowl.
        The {food} was {taste} and fresh.
        {name} paid the bill and left a tip for the waiter.
        After dinner, we washed the plates and the cups.
        {name} is cooking dinner, and the rice is almost ready.
        They ordered {dish} and two glasses of {drink}.
        The coffee is too hot to drink.
        I usually have toast and a cup of {hotdrink} for breakfast.
        {name} added salt and pepper to the soup.
        {friend} baked bread every morning before the shop opened.
        Eating too much sugar is bad for your teeth.
        The restaurant was full, so we ate at home.
    """),
    closings=_w("""
        After the meal, {name} said it was the best food {he} had ever eaten.
        {name} and {friend} finished their tea and went home.
        Everyone thanked {name} for the lovely dinner.
    """),
)

_SCHOOL = Topic(
    roles=_w("""
        a student
        a teacher
        a head teacher
        a young pupil
        a university student
    """),
    organisations=_w("""
        Hillside School
        the Primary School in the village
        Park Lane High School
        the university
        the college in town
    """),
    slots={
        "subject": _w("maths history science English French music art geography physics "
                      "chemistry biology"),
        "schoolthing": _w("pen pencil book notebook ruler bag paper"),
        "task": _w("homework exam test essay project lesson"),
        "grade": _w("good bad high low"),
    },
    openings=_w("""
        {name} was {role} at {org} in {place}.
        {name} started at {org} in September.
        Every morning, {name} walked to {org} with {friend}.
    """),
    body=_w("""
        The teacher wrote the date on the board.
        {name} forgot {his} {schoolthing} at home.
        Our first lesson today is {subject}.
        The students opened their books at page {bignumber}.
        {name} did {his} {subject} homework after dinner.
        Have you finished your {task} yet?
        The {subject} test was on {day}, and {name} studied all week.
        {name} got a {grade} mark in the {subject} exam.
        The teacher asked a question, and {name} put up {his} hand.
        I don't understand this question. Can you help me?
        The class learned about the history of {country}.
        {name} sat next to {friend} in the classroom.
        At break time, the children played in the playground.
        The bell rang, and the students left the classroom.
        {name} borrowed a pencil from {friend}.
        The teacher was happy because everyone passed the exam.
        {name} wants to study {subject} at university.
        We have {number} lessons on {day}.
        The school library was quiet, and students were reading.
        {name} wrote the answers in {his} notebook.
        The students are learning to speak French.
        {name} was late for school because {he} missed the bus.
        Next year, {name} will go to the university in {city}.
        The teacher said, "Please open your books and read the first chapter."
        {name} and {friend} worked on the science project together.
        The exam starts at {hour} o'clock, so don't be late.
        {name} graduated from {org} with a degree in {subject}.
        The professor gave a lecture about the history of science.
        Students must not use their phones in class.
        The school is closed for the holidays in August.
    """),
    closings=_w("""
        At the end of the day, {name} packed {his} bag and went home.
        {name} was proud of {his} marks that year.
        {name} said goodbye to {his} teacher and walked home with {friend}.
    """),
)

_WORK = Topic(
    roles=_w("""
        a manager
        a nurse
        an engineer
        a secretary
        a lawyer
        a driver
        a police officer
        a shop assistant
        a cleaner
        a designer
    """),
    organisations=_w("""
        a big company in the city
        a small firm near the station
        the local hospital
        the council office
        a factory outside town
        the post office
    """),
    slots={
        "job": ("teacher", "doctor", "nurse", "driver", "engineer", "lawyer", "manager",
                "writer", "artist", "farmer", "builder", "cook", "police officer", "secretary",
                "cleaner"),
        "worktask": _w("""
            answered emails
            wrote a report
            had a meeting with the boss
            called a customer
            checked the accounts
            finished the project
            prepared a presentation
            trained the new staff
        """),
        "office": ("office", "meeting room", "factory", "shop", "hospital"),
    },
    openings=_w("""
        {name} worked as {role} at {org} in {place}.
        {name} got a new job at {org}.
        {name} has been {role} at {org} for {number} years.
    """),
    body=_w("""
        {name} {worktask} in the morning.
        The meeting started at {hour} o'clock and lasted two hours.
        {name}'s boss asked {him} to finish the report by {day}.
        I work from nine to five, five days a week.
        What do you do? I'm a {job}.
        {name} earns {bignumber} pounds an hour.
        The company hired {number} new workers this year.
        {name} sent an email to the manager about the project.
        {friend} works as a {job} in {city}.
        {name} was tired after a long day at work.
        The office was busy, and the phone rang all day.
        {name} applied for a job as a {job}.
        {name} had an interview at {org} on {day}.
        The staff had a meeting about the new plan.
        We are working late tonight because of the deadline.
        {name} didn't go to work because {he} was ill.
        The factory makes parts for cars.
        {name} asked for a pay rise, and the manager agreed.
        The business grew quickly, and the company opened a new office.
        Our team is working on a new product.
        {name} retired after {bignumber} years at {org}.
        {name} will start {his} new job next {day}.
        The workers went on strike for better pay.
        {name} took the bus to the office every morning.
        The manager thanked the team for their hard work.
        {name} printed the documents and put them on the desk.
        I'm busy now. Can we talk after lunch?
    """),
    closings=_w("""
        At six o'clock, {name} turned off the computer and went home.
        {name} was happy with {his} work that week.
        {name} and {friend} had a drink after work.
    """),
)

_SHOPPING = Topic(
    roles=_w("""
        a shop assistant
        a customer
        a market trader
        a student
        a shop owner
    """),
    organisations=_w("""
        the supermarket on the high street
        the market in the square
        the corner shop
        the shopping centre
        the bookshop near the station
    """),
    slots={
        "item": _w("shirt dress coat jacket hat shoes bag watch book phone bike jeans"),
        "grocery": _w("bread milk eggs apples cheese rice coffee tea butter potatoes sugar"),
        "shop": _w("shop supermarket market bakery bookshop store"),
        "price": _w("2 3 5 10 20 50 100"),
        "pay": _w("cash card"),
    },
    openings=_w("""
        {name} went shopping at {org} in {place}.
        {name} worked as {role} at {org}.
        On {day}, {name} and {friend} went to {org}.
    """),
    body=_w("""
        {name} bought a new {item} for {price} pounds.
        How much is this {item}? It's {price} dollars.
        {name} paid by {pay} at the till.
        We need to buy some {grocery} and some {grocery}.
        The shop was closed, so {name} went to the supermarket.
        The {item} was too expensive, so {name} didn't buy it.
        {name} put the {grocery} in the basket.
        The shop assistant asked, "Can I help you?"
        I'm looking for a {colour} {item}.
        {name} tried on the {item}, but it was too small.
        Everything in the shop was half price in the sale.
        {name} saved money to buy a new {item}.
        Prices went up again this year.
        {name} paid with {his} credit card.
        The bill came to {bignumber} pounds.
        {name} gave the cashier a {price} pound note and got the change.
        The market sells fresh fruit and vegetables every {day}.
        Do you take cards? Sorry, cash only.
        {name} spent all {his} money on clothes.
        I can't afford a new {item} this month.
        {name} took the {item} back to the shop because it was broken.
        The shops are open from nine until six.
        {name} carried the shopping home in two bags.
        The cost of food is rising every month.
        {name} counted {his} coins and paid for the bread.
        The new shopping centre has over {bignumber} shops.
        {name} sold {his} old {item} online.
    """),
    closings=_w("""
        {name} went home happy with {his} new {item}.
        {name} had spent more money than {he} wanted.
        Tired of shopping, {name} and {friend} stopped for a coffee.
    """),
)

_TRAVEL = Topic(
    roles=_w("""
        a bus driver
        a pilot
        a taxi driver
        a tourist
        a student
    """),
    organisations=_w("""
        the airport
        the bus station
        the train station
        the hotel by the sea
        the travel office
    """),
    slots={
        "vehicle": _w("bus train taxi car plane bike boat ship"),
        "trip": _w("holiday trip journey tour"),
        "luggage": _w("bag suitcase ticket passport map"),
    },
    openings=_w("""
        {name} was going on holiday to {country}.
        {name} worked as {role} in {place}.
        Last summer, {name} and {friend} went on a trip to {city}.
    """),
    body=_w("""
        We took the {vehicle} to {city}.
        The flight to {country} left at {hour} o'clock.
        {name} packed {his} {luggage} the night before.
        Don't forget your passport!
        The {vehicle} was late because of the traffic.
        {name} booked a room at a hotel near the beach.
        How long does it take to get to the airport?
        The journey took {number} hours by {vehicle}.
        {name} drove the car along the coast road.
        We missed the last bus, so we took a taxi.
        The plane landed in {city} in the evening.
        {name} bought a return ticket to {city}.
        The traffic on the motorway was terrible.
        {name} rides {his} bike to work every day.
        Next year, we will travel around {country} by train.
        The driver stopped the bus at the station.
        {name} showed {his} passport at the border.
        The hotel was expensive, but the view of the sea was beautiful.
        {name} got lost and asked for directions.
        Turn left at the bridge, and the station is on your right.
        {name} has never been to {country}.
        Have you ever been to {city}?
        We're flying to {country} on {day}.
        {name} sent {his} family a postcard from {city}.
        The ship crossed the sea in {number} days.
        The road was closed, so the driver took another route.
        {name} parked the car outside the hotel.
    """),
    closings=_w("""
        After a long journey, {name} was glad to be home.
        {name} said it was the best {trip} of {his} life.
        {name} and {friend} promised to travel together again.
    """),
)

_WEATHER = Topic(
    roles=_w("""
        a gardener
        a farmer
        a teacher
        a weather reporter
        a student
    """),
    organisations=_w("""
        the hills above town
        the town park
        the beach
        the village square
        the garden
    """),
    slots={
        "weathernow": _w("raining snowing sunny cloudy windy cold hot warm wet dry"),
        "sky": _w("blue grey dark clear"),
        "wear": _w("coat hat scarf jacket boots gloves umbrella"),
        "temperature": _w("5 10 15 20 25 30 35"),
    },
    openings=_w("""
        {name} looked out of the window in {place}.
        It was {season} in {place}.
        On {day} morning, {name} walked to {org}.
    """),
    body=_w("""
        It is {weathernow} today, so wear a {wear}.
        In {season}, the days are {often} {weathernow} here.
        The sky was {sky}, and the wind was cold.
        It rained all day, and the streets were wet.
        The sun came out after the storm.
        {name} put on {his} coat and took {his} umbrella.
        It's so hot today! Let's go to the beach.
        The snow covered the roads, and the schools were closed.
        In summer, the sun shines until late in the evening.
        The leaves turn red and yellow in autumn.
        The temperature fell to {temperature} degrees.
        It was {temperature} degrees in the shade.
        What's the weather like today? It's {weathernow}.
        The wind blew the leaves across the garden.
        We stayed inside because it was raining.
        The weather report said it would rain tomorrow.
        In winter, the lake freezes and the children skate on the ice.
        {name} likes the warm days of spring.
        There was a big storm last night, and a tree fell on the road.
        It didn't rain for {number} weeks, and the grass turned brown.
        The clouds were dark, and we could hear thunder.
        Will it snow at Christmas this year?
        After the rain, there was a rainbow over the hills.
        The air was cold, and {name}'s breath made clouds.
        In {month}, the weather is usually warm.
        The fog was so thick that we couldn't see the road.
    """),
    closings=_w("""
        By the evening, the weather had changed again.
        {name} hoped for better weather the next day.
        The sun went down, and the air grew cold.
    """),
)

_ANIMALS = Topic(
    roles=_w("""
        a farmer
        a vet
        a zoo keeper
        a shepherd
        a child
    """),
    organisations=_w("""
        Hill Farm
        the farm by the river
        the city zoo
        the animal hospital
        the old farm on the hill
    """),
    slots={
        "pet": _w("dog cat rabbit horse bird fish"),
        "farmanimal": _w("cows sheep pigs chickens horses goats ducks"),
        "wildanimal": _w("lion elephant bear monkey tiger fox wolf deer"),
        "sound": _w("barked meowed sang"),
    },
    openings=_w("""
        {name} was {role} at {org} near {place}.
        {name} grew up on {org}.
        Every weekend, {name} helped out at {org}.
    """),
    body=_w("""
        The dog barked at the cat.
        {name}'s dog ran across the field after a ball.
        The farmer fed the {farmanimal} in the morning.
        The cows gave milk, and the chickens laid eggs.
        {name} milked the cows at six o'clock.
        The cat caught a mouse in the barn.
        We have a {pet} called Max.
        The horse ate grass in the field.
        The sheep were in the field on the hill.
        {name} took the dog for a walk in the park.
        The birds sang in the trees at dawn.
        At the zoo, we saw a {wildanimal} and two {farmanimal}.
        The vet looked at the {pet}'s leg.
        Does your dog bite? No, he's very friendly.
        The farmer's dog kept the sheep together.
        {name} feeds the {pet} twice a day.
        The horses were in the stable all winter.
        A fox got into the chicken house last night.
        The ducks swam on the pond near the farm.
        {name} grows wheat and potatoes on the farm.
        The pigs were hungry, so {name} gave them some food.
        The farmer drove the tractor across the field.
        Cats sleep for most of the day.
        The dog wagged its tail when {name} came home.
        {name} is afraid of big dogs.
        The bees flew from flower to flower in the garden.
        There are {number} horses and {bignumber} sheep on the farm.
    """),
    closings=_w("""
        In the evening, {name} closed the gate and went inside.
        The animals slept, and the farm was quiet.
        {name} loved life on the farm.
    """),
)

_BODY = Topic(
    roles=_w("""
        a doctor
        a nurse
        a patient
        a dentist
        a student
    """),
    organisations=_w("""
        the hospital in town
        the doctor's surgery
        the health centre
        the dentist on Bridge Street
        the sports club
    """),
    slots={
        "bodypart": _w("head arm leg foot hand back neck knee finger eye ear nose"),
        "illness": _w("cold fever headache cough"),
        "healthy": ("fruit and vegetables", "fish", "water", "salad"),
    },
    openings=_w("""
        {name} worked as {role} at {org} in {place}.
        {name} felt ill and went to {org}.
        {name} had an appointment at {org} on {day}.
    """),
    body=_w("""
        {name} had a {illness}, so {he} stayed in bed.
        My {bodypart} hurts. I need to see a doctor.
        The doctor gave {name} some medicine for {his} {illness}.
        {name} broke {his} {bodypart} when {he} fell off {his} bike.
        {name} brushed {his} teeth and went to bed.
        The nurse checked {name}'s temperature and blood pressure.
        You should drink more water and eat more {healthy}.
        {name} goes running every morning to stay healthy.
        The dentist looked at {name}'s teeth.
        {name} washed {his} hands before dinner.
        I've got a headache. Do you have anything for it?
        {name} was in hospital for {number} days.
        Smoking is bad for your health.
        The doctor said {name} should rest for a week.
        {name} hurt {his} {bodypart} playing tennis.
        How are you feeling today? Much better, thanks.
        {name} has blue eyes and brown hair.
        Sleep is important for your body and your mind.
        {name} takes the pills three times a day.
        The baby had a fever, so we called the doctor.
        {name} cut {his} finger with a knife.
        {name} is tall and strong.
        Exercise is good for the heart.
        {name} felt sick after eating too much cake.
        The patient waited for the doctor for an hour.
        {name} needs glasses to read.
    """),
    closings=_w("""
        After a few days, {name} felt much better.
        {name} thanked the doctor and went home.
        {name} promised to look after {his} health.
    """),
)

_FAMILY = Topic(
    roles=_w("""
        a mother
        a father
        a grandmother
        a student
        an uncle
    """),
    organisations=_w("""
        the family house
        the grandparents' farm
        the big house on the hill
        the flat in town
        the cottage by the sea
    """),
    slots={
        "celebration": _w("birthday wedding Christmas party anniversary"),
        "gift": _w("book watch bike cake card scarf toy"),
    },
    openings=_w("""
        {name} lived in {place} with {his} {relative}.
        {name}'s family met at {org} for a {celebration}.
        {name} and {friend} have been friends since school.
    """),
    body=_w("""
        My {relative} is {number} years old.
        {name}'s sister is older than {him}.
        {name} has two brothers and a sister.
        We visited our grandparents on Sunday.
        {friend} is {name}'s best friend.
        {name} gave {his} {relative} a {gift} for {his} birthday.
        Happy birthday! How old are you today?
        The whole family came to the {celebration}.
        {name} and {friend} got married last {month}.
        The children played together in the garden.
        {name} called {his} mother every Sunday.
        My parents live in {city}, but I live in {place}.
        {name} looks like {his} father.
        Our baby was born in {month}.
        {name}'s grandmother told stories about the old days.
        {friend} invited {name} to a party on {day}.
        We are having a party for my {relative}'s birthday.
        {name} misses {his} family when {he} is away.
        I have known {friend} for {bignumber} years.
        The kids were laughing and playing all day.
        {name}'s husband cooked dinner for the family.
        {name} and {his} wife have three children.
        {name} was angry with {his} brother, but they made up.
        Friends are the family we choose.
        {name}'s son is learning to walk.
        {friend} and {name} talked on the phone for hours.
    """),
    closings=_w("""
        It was a happy day for the whole family.
        {name} hugged {his} {relative} and said goodbye.
        {name} was glad to have such good friends.
    """),
)

_ART = Topic(
    roles=_w("""
        a painter
        a singer
        a guitar player
        an artist
        a dancer
        an actor
    """),
    organisations=_w("""
        the town museum
        the art school
        the concert hall
        the theatre on the square
        the music shop
    """),
    slots={
        "instrument": _w("piano guitar violin drums flute trumpet"),
        "artwork": _w("picture painting drawing song poem film"),
        "genre": _w("rock pop jazz classical folk"),
    },
    openings=_w("""
        {name} was {role} in {place}.
        {name} went to {org} with {friend}.
        {name} studied at {org} for {number} years.
    """),
    body=_w("""
        {name} plays the {instrument} in a band.
        I'm learning to play the {instrument}.
        {name} painted a picture of the sea.
        The museum has paintings by famous artists.
        We listened to {genre} music on the radio.
        {name} sang a song at the concert.
        The band played for two hours, and the crowd loved it.
        {name} drew a picture of {his} {relative}.
        Do you like {genre} music?
        The film was funny, and we laughed a lot.
        {name} wrote a new song about love.
        The actors were on stage for three hours.
        {name} took a photo of the old church.
        {name} practises the {instrument} every day.
        The artist used bright colours in {his} paintings.
        We went to the cinema to watch a film.
        {name}'s favourite singer has a new album.
        The concert starts at {hour} o'clock.
        {name} danced all night at the party.
        The art class painted flowers in the garden.
        The show was a great success.
        {name} played a piece by Bach on the piano.
        The music was loud, and everyone was dancing.
        {name} is a talented musician.
        The theatre was full for the first night of the play.
    """),
    closings=_w("""
        The audience stood up and clapped for a long time.
        {name} went home with the music still in {his} head.
        {name} dreamed of becoming a famous {artwork} maker one day.
    """),
)

_SPORTS = Topic(
    roles=_w("""
        a player
        a coach
        a runner
        a swimmer
        a young fan
    """),
    organisations=_w("""
        the town football club
        the tennis club
        the swimming pool
        the sports centre
        the school team
    """),
    slots={
        "sport": _w("football tennis basketball golf swimming running baseball"),
        "game": _w("chess cards football tennis"),
        "result": _w("won lost"),
        "score": _w("2 3 1 4 0"),
    },
    openings=_w("""
        {name} was {role} at {org} in {place}.
        {name} joined {org} when {he} was {number}.
        On {day}, {name} went to {org} with {friend}.
    """),
    body=_w("""
        Our team {result} the game on {day}.
        The final score was {score} to {score}.
        {name} scored a goal in the last minute.
        {name} plays {sport} every weekend.
        Do you want to play {game} with us?
        The coach told the players to run faster.
        {name} won the race and got a gold medal.
        The team trained hard for the big match.
        {name} swims {number} lengths of the pool every morning.
        We watched the game on television.
        The fans cheered when the team came onto the field.
        {name} lost the game, but {he} played well.
        The players were tired after the match.
        {name} is the best player in the team.
        Who won the game last night?
        {name} hit the ball over the net.
        The team won the cup for the {ordinal} time.
        {friend} and {name} played chess all afternoon.
        The match was cancelled because of the rain.
        {name} runs {number} miles before breakfast.
        The crowd shouted and waved their flags.
        {name} broke the world record.
        We're going to win the league this season!
        The referee blew the whistle, and the game began.
        {name} is training for the race next month.
    """),
    closings=_w("""
        After the game, the team went out to celebrate.
        {name} went home tired but happy.
        {name} could not wait for the next match.
    """),
)

_NATURE = Topic(
    roles=_w("""
        a walker
        a park ranger
        a gardener
        a student
        a scientist
    """),
    organisations=_w("""
        the forest above the valley
        the national park
        the lake in the hills
        the island in the bay
        the beach near town
    """),
    slots={
        "landscape": _w("forest lake river mountain hill beach island valley field"),
        "plant": _w("flowers trees roses grass plants"),
        "tree": _w("oak pine apple"),
    },
    openings=_w("""
        {name} went for a walk in {org} near {place}.
        {name} worked as {role} in {org}.
        On {day}, {name} and {friend} went camping by {org}.
    """),
    body=_w("""
        We walked through the {landscape} for three hours.
        The birds were singing in the trees.
        {name} planted {plant} in the garden.
        We climbed to the top of the hill and looked at the view.
        The river flows down to the sea.
        {name} swam in the lake in the morning.
        We camped by the river and made a fire.
        The {tree} tree in the garden is very old.
        The flowers open in spring.
        At night, we could see the moon and the stars.
        {name} found a small bird on the path.
        The sea was calm, and the water was clear.
        There are many wild animals in the forest.
        {name} picked some flowers for {his} mother.
        The path went up the side of the mountain.
        We sat on the beach and watched the sun go down.
        The island has white sand and green hills.
        {name} took photos of the mountains.
        The leaves fall from the trees in autumn.
        Please don't leave rubbish in the park.
        The earth goes around the sun once a year.
        The air in the mountains is fresh and clean.
        {name} loves the sound of the waves.
        {name} waters the plants every evening.
        The valley was green, and a river ran through it.
    """),
    closings=_w("""
        As the sun went down, {name} walked back to {place}.
        {name} slept well after a long day outside.
        {name} promised to come back to {org} soon.
    """),
)

_TOWN = Topic(
    roles=_w("""
        a police officer
        a postman
        a shop owner
        the mayor
        a bus driver
    """),
    organisations=_w("""
        the town hall
        the post office
        the library
        the police station
        the church on the square
    """),
    slots={
        "building": ("bank", "library", "church", "hospital", "school", "station", "museum",
                     "hotel", "cinema", "post office", "police station"),
        "direction": _w("left right"),
    },
    openings=_w("""
        {name} lived in the centre of {place}.
        {name} worked as {role} at {org} in {place}.
        {name} walked through {place} to {org}.
    """),
    body=_w("""
        The {building} is next to the park.
        Excuse me, where is the {building}?
        Turn {direction} at the corner and go straight on.
        The streets were busy with cars and buses.
        The postman brings the letters at nine o'clock.
        There is a new cafe in the high street.
        The town has a small museum and an old church.
        {name} waited at the bus stop for {bignumber} minutes.
        The library opens at {hour} o'clock on {day}.
        The police stopped the traffic on the main road.
        We met in front of the {building}.
        The market is in the town square on {day}.
        {name} crossed the road at the lights.
        The city is bigger than the town, and it is very noisy.
        The people of {place} built a new bridge over the river.
        The mayor opened the new park on {day}.
        The bank on the corner closes at four.
        The bus to the city centre leaves every ten minutes.
        {name} lives on the {ordinal} floor of a tall building.
        There are {number} churches in the town.
        The streets are quiet on Sunday morning.
        The hotel is opposite the station.
        The town is famous for its old bridge.
        Is there a bank near here?
        {name} posted a letter at the post office.
    """),
    closings=_w("""
        In the evening, the lights of {place} came on.
        {name} loved living in {place}.
        {name} walked home through the quiet streets.
    """),
)

_ROUTINE = Topic(
    roles=_w("""
        a student
        a nurse
        a baker
        a teacher
        an office worker
    """),
    organisations=_w("""
        the office
        the school
        the bakery
        the hospital
        the shop
    """),
    slots={
        "morning": _w("""
            wakes up
            gets up
            has a shower
            gets dressed
            has breakfast
            has a cup of tea
            reads the news
        """),
        "clock": _w("six seven eight nine ten eleven"),
    },
    openings=_w("""
        {name} worked at {org} in {place}.
        {name}'s day always started early.
        On a normal day, {name} got up at {clock} o'clock.
    """),
    body=_w("""
        I usually get up at {hour} o'clock.
        {name} {morning} at {clock}.
        What time is it? It's half past {clock}.
        {name} has breakfast at {hour} and leaves the house at {hour}.
        I always go to bed at {hour}.
        {name} is never late for work.
        We have lunch at one o'clock.
        Every day, {name} takes the bus at {hour}.
        On weekends, {name} sleeps until ten.
        The film starts in {bignumber} minutes.
        {name} works from {day} to {day}.
        There are 24 hours in a day and 60 minutes in an hour.
        Today is {day}, and tomorrow is {day}.
        {name}'s birthday is on the {ordinal} of {month}.
        What are you doing this evening?
        {name} goes to the gym three times a week.
        I'll call you back in five minutes.
        Yesterday, {name} woke up late and missed the bus.
        Tomorrow, {name} will get up early.
        {name} reads the newspaper every morning.
        The shop closes at {hour} in the evening.
        {name} is {often} tired on {day}.
        It takes {bignumber} minutes to walk to school.
        {name} spent the evening at home.
        The clock on the wall said {clock} o'clock.
        Next week, {name} is going to start a new routine.
    """),
    closings=_w("""
        At {clock} o'clock, {name} turned off the light and went to sleep.
        It had been a long day, and {name} was tired.
        {name} went to bed early that night.
    """),
)

_READING = Topic(
    roles=_w("""
        a writer
        a student
        a librarian
        a journalist
        a poet
    """),
    organisations=_w("""
        the town library
        the newspaper office
        the bookshop on the corner
        the school library
        the publishing house
    """),
    slots={
        "text": _w("book story poem letter novel newspaper magazine article report"),
        "writer": _w("writer author poet journalist"),
        "pages": _w("50 100 200 300 400"),
    },
    openings=_w("""
        {name} worked as {role} in {place}.
        {name} borrowed a book from {org}.
        Every evening, {name} read in {org}.
    """),
    body=_w("""
        {name} read a {text} about a young {writer}.
        I'm reading a book about the history of {country}.
        {name} wrote a letter to {his} grandmother.
        The book has {pages} pages.
        {name} finished the last chapter of the book.
        The story was sad, but the ending was happy.
        {name} wrote the words on a piece of paper.
        The {writer} wrote a new {text} every year.
        Can you read this word for me?
        {name} looked up the word in a dictionary.
        The newspaper had a story about the new school.
        {name} writes in {his} diary every night.
        We read the poem aloud in class.
        {name} sent an email to {friend}.
        Have you read this book? It's very good.
        {name} wrote {his} name at the top of the page.
        The library has thousands of books.
        The letter arrived on {day}.
        {name} is writing a novel about {his} family.
        The title of the book is written on the cover.
        {name} learned to read when {he} was {number}.
        The magazine publishes short stories.
        Please write your answer in the box.
        The book was so good that {name} read it in one night.
        {name} printed the report and read it again.
    """),
    closings=_w("""
        {name} closed the book and turned off the lamp.
        {name} put the book back on the shelf.
        {name} could not wait to read the next one.
    """),
)

SCENE_TABLE: Mapping[str, Topic] = MappingProxyType({
    "home": _HOME,
    "food": _FOOD,
    "school": _SCHOOL,
    "work": _WORK,
    "shopping": _SHOPPING,
    "travel": _TRAVEL,
    "weather": _WEATHER,
    "animals": _ANIMALS,
    "health": _BODY,
    "family": _FAMILY,
    "art": _ART,
    "sports": _SPORTS,
    "nature": _NATURE,
    "town": _TOWN,
    "routine": _ROUTINE,
    "reading": _READING,
})
"""Scene name -> its ``Topic``, read-only: the sixteen everyday scenes."""

EVERYDAY_SCENES: tuple[str, ...] = tuple(SCENE_TABLE)
"""The everyday scenes, in a fixed order."""

