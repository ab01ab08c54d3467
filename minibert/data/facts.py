"""Everyday facts: a thing a word is for, said in several ways, so that a model learns the word.

The scenes of ``minibert.data.everyday`` tell stories, one fixed sentence for each thing that
happens; a model trained on them learns those sentences, and a new sentence about the same
thing (the kind a room calls out) finds it lost. A fact here is one piece of everyday
knowledge - tea and coffee come in cups, an umbrella is for rain, a week has seven days -
with the words that fit its gap and several frames that say it in other words, tenses and
persons. The corpus generator (``minibert.data.corpus``) puts a few facts of a scene's own,
and a few of any scene, into every everyday document, each time with a word of the fact and a
frame drawn afresh.

A fact is written as a block: the first line ``= word word ...`` lists the words that fit the
gap ``{x}``, and each further line is one frame. Frames may use the document's slots
(``{name}``, ``{friend}``, ``{he}``, ``{his}``, ``{him}``, ``{place}``) and the scenes' shared
slots (``{relative}``, ``{day}``, ``{season}``, ...). Every fact and frame was written for
this project; the room sentences (``minibert.data.room``) are held out as ever.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["FACTS", "Fact", "parse_facts"]


@dataclass(frozen=True)
class Fact:
    """One piece of everyday knowledge: the words that fit its gap and the frames around it."""

    words: tuple[str, ...]
    frames: tuple[str, ...]


def parse_facts(text: str) -> tuple[Fact, ...]:
    """Read blocks of ``= words`` followed by frame lines; blank lines are ignored."""
    facts: list[Fact] = []
    words: tuple[str, ...] = ()
    frames: list[str] = []
    for raw in text.strip().splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("="):
            if frames:
                facts.append(Fact(words, tuple(frames)))
            words, frames = tuple(line[1:].split()), []
        else:
            if not words:
                raise ValueError(f"a frame comes before any '= words' line: {line!r}")
            if "{x}" not in line:
                raise ValueError(f"a frame has no {{x}} gap: {line!r}")
            frames.append(line)
    if words and frames:
        facts.append(Fact(words, tuple(frames)))
    return tuple(facts)


_HOME = """
= bed sofa chair floor carpet
The cat likes to sleep on the {x}.
{name} fell asleep on the {x} after lunch.
Our dog is not allowed on the {x}.
= fridge freezer
Keep the milk cold in the {x}.
There is some cheese in the {x} if you are hungry.
= door window gate
Don't forget to close the {x} behind you.
{name} locked the {x} before {he} went to bed.
Somebody knocked on the {x}, so I opened it.
Could you shut the {x}? It is cold in here.
= light lights lamp television radio heater
It is dark in here. Can you turn on the {x}?
{name} switched off the {x} and went to sleep.
= keys key
I can't open the door because I lost my {x}.
{name} always keeps {his} {x} in {his} pocket.
= kitchen
We cook our meals in the {x}.
{name} is in the {x}, making lunch.
The {x} smells of fresh bread.
= bedroom bed
{name} went up to {his} {x} to sleep.
I keep my clothes in a cupboard in my {x}.
= bathroom
{name} washed {his} face in the {x}.
There is a mirror above the sink in the {x}.
= table
We sat around the {x} and ate dinner.
{name} laid the {x} for four people.
Put the plates on the {x}, please.
= clean tidy
{name}'s room is always {x}.
Please keep your room {x}.
= dirty messy
After the party, the kitchen was very {x}.
Your shoes are {x}. Take them off at the door.
= garden yard
The children play in the {x} behind the house.
{name} grows tomatoes in the {x}.
= rent
We pay the {x} for the flat every month.
"""

_FOOD = """
= tea coffee chocolate milk
Would you like a cup of {x}?
I always have a hot {x} when it is cold outside.
A mug of warm {x} helps me sleep.
{name} doesn't drink {x} after six o'clock.
= water juice milk lemonade
The children drank a big glass of cold {x}.
It was hot, so we drank lots of cold {x}.
= bread
The baker gets up early to bake {x}.
You can buy fresh {x} at the bakery.
{name} cut two slices of {x} for {his} sandwich.
= bakery baker shop supermarket market
= breakfast
In the morning we eat {x}.
{name} had eggs and toast for {x}.
I never skip {x} before school.
= lunch
At twelve o'clock we stop for {x}.
{name} ate a sandwich for {x}.
= dinner supper
In the evening the family eats {x} together.
What are we having for {x} tonight?
{name} cooked pasta for {x}.
= toast eggs cereal porridge fruit bread
I eat {x} for breakfast every morning.
{name} usually has {x} and a cup of tea for breakfast.
= pasta rice chicken fish soup pizza curry
{name} is making {x} for lunch.
We had {x} and salad for dinner.
= sugar butter flour eggs milk
To make a cake you need eggs, flour, milk, butter and {x}.
{name} mixed the {x} into the cake.
We ran out of {x}, so we couldn't bake.
= salt pepper
The soup needs a little more {x}.
= menu bill food drinks
The waiter brought the {x} to our table.
We asked the waiter for the {x}.
= hungry
I didn't eat breakfast, so I'm very {x}.
{name} was {x}, so {he} made a sandwich.
= thirsty
After the run, {name} was really {x} and drank some water.
I'm {x}. Is there any water?
= sweet delicious
The cake was very {x}.
This chocolate is too {x} for me.
= cream
We had strawberries and {x} in the garden.
Do you want some ice {x}?
= oven cooker
Bake the bread in a hot {x} for half an hour.
{name} put the chicken in the {x}.
= knife
Cut the bread with a sharp {x}.
= spoon
Stir your tea with a {x}.
= fork
Eat your pasta with a {x}.
= plate
{name} put the salad on a {x}.
= full
No more for me, thanks. I'm {x}.
"""

_SCHOOL = """
= teacher
The {x} wrote the words on the board.
Our {x} set us a lot of homework.
Put up your hand if you want to ask the {x} a question.
= board blackboard whiteboard
{name} drew a map on the {x}.
= homework
{name} did {his} {x} after school.
Have you finished your {x} yet?
I forgot to do my maths {x}.
= pen pencil
Can I borrow a {x}? I need to write something.
{name} wrote {his} name with a {x}.
= books notebooks
Open your {x} at page {number}.
The students put their {x} in their bags.
= book story
Every night, my {relative} reads me a {x}.
= exam test
{name} studied hard for the {x}.
I passed my {x}!
She was nervous before the maths {x}.
= classroom class
The students sat quietly in the {x}.
There are thirty children in our {x}.
= school
{name} walks to {x} every morning.
The children go to {x} from Monday to Friday.
= answer
Do you know the {x} to this question?
{name} gave the right {x}.
= students pupils children
The teacher asked the {x} to be quiet.
All the {x} stood up when the head teacher came in.
= learn study
At school we {x} maths, English and history.
= library
You can borrow books from the {x}.
{name} studied in the {x} all afternoon.
= late
The bus didn't come, so {name} was {x} for school.
Hurry up, or we'll be {x}!
"""

_WORK = """
= office
{name} works in an {x} in the town.
My {relative} goes to the {x} every day.
= job work
{name} is looking for a new {x}.
I start {x} at nine o'clock.
= boss manager
{name} asked {his} {x} for a day off.
= meeting
We have a {x} with the team at ten.
{name} was late for the {x}.
= computer laptop
{name} types the letters on a {x}.
My {x} is broken, so I can't send the email.
= money pay
People work to earn {x}.
{name} gets {his} {x} at the end of the month.
= nurse doctor
A {x} looks after people in hospital.
= farmer
A {x} grows food and keeps animals.
= tired
After a long day at work, {name} was very {x}.
I am {x} because I went to bed late.
You look {x}. Did you sleep well?
"""

_SHOPPING = """
= money cash
I can't buy it because I have no {x}.
{name} saved {his} {x} for a new bike.
= card cash
Can I pay by {x}?
= card
{name} paid with {his} credit {x}.
= cost
How much did your shoes {x}?
The tickets {x} ten pounds each.
= expensive cheap
That coat is too {x} for me.
The fruit at the market is very {x}.
= shop store supermarket
{name} bought some milk at the {x}.
The {x} closes at six o'clock.
= buy
I want to {x} a new pair of shoes.
What did you {x} at the market?
= size
Do you have these shoes in a bigger {x}?
= price
What is the {x} of this bag?
= bag basket
{name} put the apples in {his} {x}.
= small big
These jeans are too {x}. Do you have another size?
"""

_TRAVEL = """
= airport
The plane took off from the {x}.
= station
The train leaves the {x} at ten.
{name} waited for the train at the {x}.
= plane
We flew to Spain by {x}.
The {x} landed safely.
= train bus
{name} goes to work by {x}.
I missed the {x}, so I walked.
= car
{name} drives a small {x}.
= bike bicycle
{name} rides {his} {x} to school.
I fell off my {x} and hurt my knee.
= tickets
{name} bought two {x} for the bus.
= holiday
{name} spent {his} {x} in Italy.
= passport
You need your {x} to travel to another country.
= suitcase bag
{name} packed {his} {x} for the trip.
= map
We got lost, so we looked at the {x}.
= road street
Look both ways before you cross the {x}.
"""

_WEATHER = """
= umbrella coat raincoat
Take your {x}, it is going to rain.
{name} forgot {his} {x} and got wet in the rain.
Don't go out without your {x}; it's pouring.
= cold freezing
It's {x} outside, so wear a warm coat.
The water in the lake was too {x} to swim.
= hot warm sunny
In summer it is {x}.
The sun is {x} today.
= raining snowing
Take a coat, it's {x}.
Look out of the window! It's {x}!
It has been {x} all day.
= blue
The sea was calm and {x}.
= grey dark
The sky was {x} and full of clouds.
= snow
In winter the mountains are covered with {x}.
The children built a man out of {x}.
= ice
When water freezes it turns into {x}.
The lake was covered in {x}.
= wind
The {x} blew the leaves off the trees.
= shining
= winter
December, January and February are the months of {x}.
It snows in {x}.
= summer
July and August are in {x}.
We go swimming in the {x}.
= spring
The flowers come out in {x}.
= autumn
The leaves fall from the trees in {x}.
= wet
{name} walked home in the rain and got {x}.
= weather
What is the {x} like today?
"""

_ANIMALS = """
= dog dogs
{name} takes the {x} for a walk every morning.
Our {x} wags its tail when it is happy.
= cat cats
The {x} caught a mouse.
My {x} likes to sit in the sun.
= cows
The farmer milks the {x} every morning.
We get milk from {x}.
= hens chickens
The {x} laid three eggs today.
= birds
The {x} built a nest in the tree.
In spring the {x} sing in the garden.
The {x} flew over the house.
= nest nests
Birds lay their eggs in a {x}.
There is a bird's {x} in the old tree.
= sheep
The farmer has a hundred {x}.
We get wool from {x}.
= horse
{name} rode a {x} on the farm.
= fish
The {x} swim in the pond.
= mouse
The cat chased a {x} in the kitchen.
= farm
{name} grew up on a {x} with cows and sheep.
= vet
Our dog was ill, so we took it to the {x}.
= animals
The zoo has lots of {x}.
"""

_BODY = """
= teeth
Brush your {x} twice a day.
{name} went to the dentist because {his} {x} hurt.
= hair
= hands face
Wash your {x} before you eat.
{name} washed {his} {x} with soap and water.
= water
= arm leg
{name} broke {his} {x} when {he} fell off the wall.
= doctor
If you are ill, go and see a {x}.
The {x} gave me some medicine.
= bed
I was ill, so I stayed in {x}.
= ill sick
{name} didn't go to school because {he} was {x}.
= medicine
Take this {x} three times a day.
= hospital
The ambulance took {name} to the {x}.
= eyes
Close your {x} and go to sleep.
= ears
We hear with our {x}.
= tired sleepy
I didn't sleep last night, so I am {x}.
= headache cold
I have a {x}, so I'm going to bed early.
= crying
The baby is {x} because she is hungry.
= hungry tired
"""

_FAMILY = """
= older younger
{name}'s sister is {x} than {him}.
= old
{name} is ten years {x}.
How {x} are you?
= birthday
Happy {x}! How old are you today?
We had a party for {name}'s {x}.
= brother sister
My {x} and I share a bedroom.
{name} has one {x} and two cousins.
= baby
My aunt just had a {x}.
The {x} is sleeping in the cot.
= parents
{name} lives with {his} {x}.
= grandmother grandfather grandparents
We visit our {x} every Sunday.
= friend
{name} is my best {x}.
= friends
I met my {x} at the cinema.
= people
There are five {x} in my family.
= married
{name}'s parents got {x} twenty years ago.
"""

_ART = """
= piano guitar drums violin
Can you play the {x}?
= song songs
= picture painting
There is a {x} of my grandmother on the wall.
= music
We listened to {x} on the radio.
= film movie
= cinema
= museum gallery
We saw old paintings at the {x}.
= dance
Would you like to {x}?
"""

_SPORTS = """
= football tennis basketball
{name} plays {x} with {his} friends.
= game match
We lost the {x} three to one.
= ball
{name} kicked the {x} into the goal.
Throw me the {x}!
= goal
{name} scored a {x} in the last minute.
= team
{name} is the captain of the {x}.
= swim
{name} learned to {x} in the sea.
= race
{name} ran fast and won the {x}.
"""

_NATURE = """
= hill mountain
= trees
There are tall {x} in the forest.
The children climbed the {x}.
= sea
We swam in the {x}.
= beach
We built sandcastles on the {x}.
= flowers
{name} planted {x} in the garden.
The {x} smell sweet in spring.
= river
We fished in the {x}.
= sky
The moon shines in the night {x}.
= grass
The {x} is green after the rain.
= east
The sun comes up in the {x}.
= west
The sun goes down in the {x}.
"""

_TOWN = """
= church
The {x} bells ring on Sunday.
= bank
= post
I sent the parcel from the {x} office.
= park
The children played in the {x}.
= hospital
The doctors and nurses work at the {x}.
= police
If someone steals your bag, call the {x}.
= restaurant cafe
We had dinner at a nice {x}.
= town city
"""

_ROUTINE = """
= days
{name} was away for three {x}.
= months
There are twelve {x} in a year.
= hours
There are twenty four {x} in a day.
= minutes
There are sixty {x} in an hour.
The bus comes in five {x}.
= year
= week
There are seven days in a {x}.
= Saturday Sunday
The weekend is {x}.
= morning
I wake up at seven in the {x}.
{name} has a shower every {x}.
= night
I go to bed at ten at {x}.
= late early
{name} missed the bus and was {x}.
= sleep
I was so tired that I went to {x} at eight.
= up
{name} gets {x} at six every day.
= clock watch
{name} looked at the {x}. It was late.
"""

_READING = """
= letter postcard card
I got a {x} from my friend in Spain.
= email message
I sent {name} a long {x} this morning.
= book
= newspaper
{name} reads the {x} every morning.
= story
Tell me a {x}, please.
= dictionary
Look the word up in the {x}.
= library
The {x} is full of books.
= words
This book has a lot of difficult {x}.
"""

# More facts (issue #47): the commonest everyday associations a class calls out.
_HOME_MORE = """
= sofa couch armchair
{name} sat on the {x} and watched a film.
We bought a new {x} for the living room.
Don't put your feet on the {x}!
= pillow blanket duvet
{name} put a warm {x} on the bed.
I can't sleep without my {x}.
= cupboard drawer shelf
The cups are in the {x} above the sink.
After drying up, {name} stacked every plate inside the {x}.
Where did you put the spoons? In the {x}.
= sink dishwasher
{name} washed the dishes in the {x}.
Put the dirty cups in the {x}, please.
= oven cooker stove
{name} baked a cake in the {x}.
The bread is still in the {x}, it isn't ready yet.
= shower bath
{name} has a hot {x} every morning.
I had a long {x} after the game.
Are you still in the {x}?
= mirror
She looked at herself in the {x}.
{name} checked {his} tie quickly in the {x}.
= stairs steps
{name} ran up the {x} to {his} room.
Be careful, the {x} are wet.
= roof
The rain came in through a hole in the {x}.
There is a bird on the {x} of our house.
= wall walls
We hung a picture on the {x}.
{name} painted the {x} of {his} room blue.
= clock
The {x} on the wall says it is six.
Our kitchen {x} ticks loudly all day.
= towel
{name} dried {his} hands on a {x}.
{name} wrapped {his} wet hair in a big {x}.
= soap
Wash your hands with {x} and water.
There is no {x} left in the bathroom.
= plate bowl cup
{name} put the food on a {x}.
I broke a {x} when I was washing up.
= knife
{name} cut the meat with a {x}.
= spoon
You eat soup with a {x}.
= vacuum broom
{name} cleaned the floor with the {x}.
= neighbours neighbour
Our {x} next door are very friendly.
{name} said hello to {his} {x} over the fence.
= house flat home
{name} rents a tiny {x} close to the railway.
We moved to a bigger {x} last year.
Welcome to our new {x}!
= room
We watch television in the living {x}.
= washing laundry
{name} hung the {x} out to dry.
I have to do the {x} today.
= iron
{name} used an {x} to make {his} shirt smooth.
= candle candles
The power went off, so we lit a {x}.
"""
_FOOD_MORE = """
= bread toast
{name} buys a loaf of {x} every morning.
I had {x} with butter for breakfast.
= butter jam honey
{name} spread some {x} on {his} toast.
Could you pass the {x}, please?
= cheese ham
{name} made a sandwich with {x}.
I'd like a {x} sandwich, please.
= cake
It's {name}'s birthday, so we baked a {x}.
Would you like a piece of {x}?
= eggs
{name} had two boiled {x} for breakfast.
The hens laid three {x} this morning.
= rice pasta noodles
{name} cooked some {x} for dinner.
We had chicken with {x} last night.
= soup
{name} made a bowl of hot {x}.
Eat your {x} before it gets cold.
= apple banana orange
{name} ate the {x} after lunch.
For a snack, {name} picked the ripest {x} from the bowl.
= salt pepper sugar
Could you pass the {x}, please?
This soup needs a bit more {x}.
= sugar milk
How much {x} do you want with your coffee?
{name} never puts {x} in {his} tea.
= water juice
After football, {name} poured {his} brother some {x}.
{name} drank a glass of cold {x}.
= breakfast lunch dinner
What did you have for {x}?
We had fish and chips for {x}.
= hungry
I haven't eaten all day, I'm so {x}.
{name} was {x}, so {he} made a sandwich.
= thirsty
After the run, {name} was very {x}.
= sweet
Chocolate tastes {x}.
= sour
Lemons taste {x}.
= restaurant cafe
We had dinner at a {x} in town.
{name} works as a waiter in a {x}.
= menu
{name} read the whole {x} before ordering.
Can I see the {x}, please?
= chips potatoes
{name} ordered fish and {x}.
= vegetables fruit
Eat your {x}, they are good for you.
{name} buys fresh {x} at the market.
= chicken fish meat beef
We're having roast {x} on Sunday.
{name} doesn't eat {x}; {he} is a vegetarian.
= pizza burger
{name} ordered a large {x} with cheese.
= bottle glass
{name} opened a {x} of wine.
= knife
Cut the bread with a sharp {x}.
= recipe
{name} followed {his} grandmother's {x} for the cake.
"""

_SCHOOL_MORE = """
= pencil pen
May I use your {x}? Mine is broken.
{name} wrote {his} name with a {x}.
= rubber eraser
{name} rubbed out the mistake with {his} {x}.
= ruler
Draw a straight line with a {x}.
= homework
{name} forgot to do {his} {x}.
The teacher gave us a lot of {x} today.
Have you finished your {x} yet?
= teacher
Our {x} marked every test over the weekend.
{name} asked the {x} a question.
= students pupils children
The {x} sat quietly in the classroom.
The teacher told the {x} to open their books.
= exam test
{name} studied hard for the {x}.
Did you pass the {x}?
I failed my maths {x}.
= maths math history science english
{name}'s favourite subject is {x}.
We have {x} on Monday morning.
= classroom
The {x} was empty after the bell rang.
= board whiteboard
The teacher wrote on the {x}.
= bag backpack
{name} put {his} books in {his} school {x}.
= break lunch
We play football in the playground at {x}.
= holidays holiday
School is closed for the summer {x}.
= university college
{name} went to {x} to study medicine.
= lesson class
The {x} starts at nine o'clock.
{name} was late for {his} first {x}.
= answer
I don't know the {x} to this question.
= question
Put up your hand if you have a {x}.
= marks grades
{name} got good {x} in all {his} exams.
"""

_WORK_MORE = """
= doctor nurse
The {x} works at the hospital.
{name} is a {x}; {he} looks after sick people.
= teacher
A {x} works at a school.
= farmer
The {x} milks the cows every morning.
The {x} drove {his} tractor across the field.
= pilot
The {x} flew the plane to Paris.
The {x} landed the plane safely.
= driver
The bus {x} stopped to let us on.
= chef cook
The {x} cooks meals in the restaurant kitchen.
{name} is a {x} in a hotel kitchen.
= officer
The police {x} caught the thief.
= office
{name} works in an {x} in the city.
I left my laptop at the {x}.
= boss manager
{name} asked {his} {x} for a day off.
= meeting
I'm sorry, I'm late for a {x}.
{name} has a {x} with {his} boss at ten.
= job work
{name} is looking for a new {x}.
I start my new {x} on Monday.
= salary money
{name} earns good {x} working in a bank.
= computer laptop
{name} typed the report on {his} {x}.
= holiday
{name} is on {x} this week, so {he} isn't at work.
= retired
My grandfather doesn't work any more; he is {x}.
= colleagues
{name} had lunch with {his} {x} from work.
= shop factory
{name} works in a {x} that makes cars.
= dentist
My tooth ached, so I booked the {x} for Monday.
= waiter waitress
The {x} brought us our food.
= builder
The {x} is building a new house next door.
= postman
The {x} brings the letters every morning.
"""
_SHOPPING_MORE = """
= cash card
Can I pay by {x}?
{name} paid for the shoes with {x}.
Sorry, this shop only accepts {x}.
= money cash
I have no {x} left in my wallet.
{name} saved {his} {x} for a new bike.
= wallet purse
{name} keeps {his} money in a {x}.
I think somebody stole my {x}.
= price
What is the {x} of this jacket?
= cheap
These shoes were very {x}, only ten pounds.
= expensive
That car is too {x}; I can't afford it.
= supermarket shop market
We were out of milk, so {name} popped to the {x}.
Every Saturday our family shops at that {x}.
= receipt
Keep the {x} in case you want to return it.
= change
Here is your {x}: two pounds fifty.
= basket trolley
{name} put the apples in {his} {x}.
= bakery baker
We buy our bread at the {x}.
= size
Do you have these shoes in a bigger {x}?
= sale
Everything in the shop is half price in the {x}.
= bank
{name} opened a savings account at the {x}.
= queue line
We waited in a long {x} at the checkout.
= customer customers
The shop was full of {x} on Saturday.
= bag
Would you like a {x} for your shopping?
"""

_TRAVEL_MORE = """
= car
{name} drives {his} {x} to work.
Can you drive a {x}?
= bike bicycle
{name} rides {his} {x} to school.
I fell off my {x} and hurt my knee.
= bus train
Every morning {name} catches the {x} into town.
{name} missed the last {x} home.
The {x} was late again this morning.
= plane
The {x} landed at the airport on time.
{name} is afraid of flying in a {x}.
= airport
We need to be at the {x} two hours before the flight.
= station
The train leaves the {x} at eight.
= ticket tickets
{name} bought a return {x} to London.
Show me your {x}, please.
= passport
Nobody crosses the border without showing a {x}.
{name} forgot {his} {x} at home and missed the flight.
= suitcase luggage bags
{name} packed {his} {x} for the holiday.
= map
We got lost, so we looked at the {x}.
= hotel
We stayed at a {x} near the beach.
= road street
Look both ways before you cross the {x}.
= petrol fuel
The car ran out of {x} on the motorway.
= boat ship ferry
We crossed the sea by {x}.
The {x} sailed into the harbour.
= licence
{name} passed {his} test and got {his} driving {x}.
= taxi
After midnight {name} phoned for a {x} home.
= seatbelt
Always wear your {x} in the car.
Put on your {x} before we drive off.
= holiday trip
Next summer our family goes on {x} by the sea.
= traffic
We were stuck in {x} for an hour.
"""

_WEATHER_MORE = """
= sunny hot warm
The morning was {x}, so {name} wore shorts.
The weather was {x} all week.
= cold freezing
It's {x} outside, put on a coat.
The water in the lake was {x}.
= raining rainy wet
It's {x}, so take an umbrella.
{name} came home {x} from the rain.
= snow
The children built a snowman in the {x}.
In winter the mountains are covered in {x}.
= wind
The {x} blew my hat off.
The trees moved in the strong {x}.
= cloudy grey
Dark clouds made the whole day {x}.
= storm thunder
There was a big {x} last night.
The {x} woke the baby up.
= summer
It is hot in {x}.
We go swimming in the sea every {x}.
= winter
It often snows in {x}.
In {x} the days are short and cold.
= spring
Flowers come out in {x}.
Birds build their nests in {x}.
= autumn
Leaves fall from the trees in {x}.
Every {x} our maple goes red and gold.
= coat jacket scarf gloves
Put on your {x}, it's cold.
{name} wore a warm {x} in the snow.
= sunglasses hat
{name} wore {his} {x} because the sun was bright.
Pack your {x}, the beach will be bright.
= umbrella
It's pouring, and {name} forgot {his} {x}.
= sun
The {x} rises in the east.
= rainbow
After the rain we saw a {x} in the sky.
= weather
What's the {x} like today?
{name} checked the {x} before packing for the trip.
= temperature
The {x} dropped below zero last night.
= fog
We couldn't see the road because of the {x}.
= ice
Be careful, there is {x} on the road.
"""

_ANIMALS_MORE = """
= dog
The {x} wagged its tail.
{name} takes the {x} for a walk every evening.
= dogs
Our {x} bark at every stranger.
Our {x} need a long walk every day.
= cat kitten
The {x} purred on my lap.
The {x} chased a mouse.
= cows cow
The {x} gave a lot of milk.
The farmer milks the {x} at dawn.
Black and white {x} were eating grass in the field.
= sheep
The farmer has a field of {x}.
We get wool from {x}.
= hens chickens
The {x} lay eggs every morning.
{name} feeds the {x} corn every morning.
= horse pony
{name} learned to ride a {x} last summer.
The {x} jumped over the fence.
{name} gave the {x} an apple.
= bird birds
The {x} sang in the tree.
Can you hear the {x} singing?
The {x} flew south for the winter.
= fish
The {x} swam in the pond.
{name} caught a big {x} in the river.
= mouse
The cat caught a {x}.
A little grey {x} ate the cheese.
= bees
Honey is made by {x}.
{name} was stung by one of the {x}.
= spider
A {x} has eight legs.
= duck ducks
The {x} swam across the lake.
We fed bread to the {x} at the pond.
= pig pigs
The {x} rolled in the mud.
The farmer keeps {x} and sheep.
= lion tiger
The {x} is a big cat.
At the zoo, the {x} roared at us.
= elephant
The {x} has a long trunk.
An {x} is bigger than a horse.
= monkey
The {x} climbed the tree.
The {x} ate a banana.
= rabbit
The {x} ate the carrots in the garden.
The {x} hopped across the field.
= zoo
We saw lions and tigers at the {x}.
= vet
{name} took {his} sick dog to the {x}.
= pets
Do you have any {x}?
= barked
The dog {x} all night.
Our dog {x} at the cat next door.
= milk
Cows give {x}.
{name} pours cold {x} on {his} cereal.
= wool
We get {x} from sheep.
= nest
The bird built a {x} in the tree.
"""
_BODY_MORE = """
= teeth
{name} brushes {his} {x} twice a day.
Did you brush your {x}?
= hair
{name} combed {his} {x} before school.
She has long brown {x}.
= eyes
Close your {x} and go to sleep.
{name} has blue {x}.
= ears
We hear with our {x}.
{name} covered {his} {x} because the music was too loud.
= nose
We smell with our {x}.
{name} has a cold and a runny {x}.
= hands
Wash your {x} before you eat.
{name} clapped {his} {x} at the end of the show.
= feet
{name}'s {x} hurt after the long walk.
Wipe your {x} before you come in.
= head
I have a terrible pain in my {x}.
{name} nodded {his} {x}.
= headache cold fever
{name} stayed in bed with a {x}.
I've got a {x}, so I'm not going to work.
= doctor
If you feel ill, go to the {x}.
The {x} said I should stay in bed.
= medicine pills
Take this {x} three times a day.
{name} took some {x} for {his} headache.
= hospital
{name} broke {his} leg and went to {x}.
= ill sick
{name} didn't come to school because {he} was {x}.
I feel {x}; I think I ate something bad.
= tired
I went to bed early because I was {x}.
After the long day, {name} was very {x}.
= leg arm
{name} fell and broke {his} {x}.
{name} hurt {his} {x} playing football.
= heart
The {x} pumps blood around the body.
= fingers
We have ten {x} on our hands.
= toes
We have five {x} on each foot.
= mouth
Don't talk with your {x} full.
Open your {x} and say ah.
= dentist
The {x} checked my teeth.
= glasses
{name} can't read without {his} {x}.
= sleep
You should get eight hours of {x} a night.
= exercise
Regular {x} keeps you healthy.
"""

_FAMILY_MORE = """
= mother mum father dad
{name} lives with {his} {x}.
I called my {x} on Sunday.
= sister brother
{name} has an older {x}.
My little {x} is five years old.
= grandmother grandma grandfather grandpa
We visit my {x} every weekend.
= aunt uncle
My mother's brother is my {x}.
= uncle
My father's brother is my {x}.
= aunt
My mother's sister is my {x}.
= cousin cousins
The children of my aunt are my {x}.
= baby
The {x} cried all night.
{name} rocked the {x} to sleep.
= wedding
They got married at a big {x} in June.
= wife husband
{name} has been married to {his} {x} for ten years.
= birthday
Happy {x}! How old are you now?
{name} had a party for {his} tenth {x}.
= friend friends
{name} went to the cinema with {his} {x}.
= son daughter
They have one {x} and two dogs.
{name} has a {x} who is ten years old.
= parents
{name} still lives with {his} {x}.
= twins
The two sisters look the same; they are {x}.
= present gift
I bought {name} a {x} for {his} birthday.
{name} wrapped the {x} in paper.
= party
We are having a {x} on Saturday. Can you come?
= family
There are five people in my {x}.
"""

_ART_MORE = """
= piano guitar violin drums
{name} practises the {x} for an hour every evening.
My sister has {x} lessons on Thursdays.
= song songs
Everyone joined in when {name} started that {x}.
= singer band
The {x} played all their old songs.
The {x} came on stage to loud cheers.
= concert
Thousands of fans came to the {x} last night.
= paint paints brush
{name} painted a picture with {his} {x}.
= picture painting
{name} hung the {x} on the wall.
{name} drew a {x} of a horse.
= museum gallery
We saw old paintings at the {x}.
= film movie
Have you seen that new {x} with the talking dog?
= cinema
{name} bought popcorn at the {x} before the film started.
= dance
{name} likes to {x} to loud music.
= music
{name} listens to {x} on {his} phone.
Turn down the {x}, it's too loud!
= camera
{name} took a photo with {his} {x}.
Smile at the {x}!
= photo
Can you take a {x} of us?
= drawing
The child showed me {his} {x} of a house.
"""
_SPORTS_MORE = """
= football tennis
{name} plays {x} every Saturday.
Do you like playing {x}?
= ball
{name} kicked the {x} into the goal.
Throw me the {x}!
= goal goals
{name} scored a {x} in the last minute.
The keeper saved the {x}.
= racket
You hit a tennis ball with a {x}.
{name} bought a new tennis {x}.
= bat
You hit the ball with a {x} in cricket.
= team
{name} plays in the school football {x}.
Which {x} do you support?
= match game
We won the {x} three to one.
Did you watch the {x} last night?
= swimming
{name} goes {x} at the pool every morning.
= pool
We swam twenty lengths in the {x}.
{name} jumped into the {x}.
= running
Every morning {name} goes {x} along the river.
= won
Last year our school {x} every single match.
= lost
We {x} the game, but we played well.
= chess cards
{name} and {his} grandfather play {x} on Sundays.
= bike
{name} rode {his} {x} in the race.
= skiing
In winter we go {x} in the mountains.
= medal
{name} won a gold {x}.
{name} proudly wore the {x} round {his} neck.
= referee
The {x} blew the whistle.
The {x} showed the player a red card.
= gym
{name} goes to the {x} three times a week.
"""

_NATURE_MORE = """
= tree trees
The birds sat in the {x}.
We sat in the shade of a big {x}.
= flowers
{name} picked some {x} in the garden.
The {x} smell lovely in spring.
= grass
The {x} is green after the rain.
= sea beach
We swam in the {x} on holiday.
{name} built a sandcastle on the {x}.
= river lake
We went fishing in the {x}.
The children swam in the {x}.
= mountain hill
From the top of that {x} you can see three towns.
= forest woods
We went for a walk in the {x}.
{name} got lost in the {x} among the trees.
= sky
The {x} is blue today.
There isn't a cloud in the {x}.
= moon stars
At night we can see the {x}.
{name} looked up at the {x} at night.
= sun
The {x} is shining.
= leaves
In autumn the {x} turn brown.
{name} swept up the fallen {x}.
= rock stone
{name} sat on a {x} by the river.
= sand
The children built a castle in the {x}.
= island
We took a boat to the {x}.
= camping
We went {x} and slept in a tent.
= tent
We put up the {x} by the lake.
= field fields
The cows were in the {x}.
"""

_TOWN_MORE = """
= library
{name} borrowed a book from the {x}.
= office
You can buy stamps in the post {x}.
= park
The children played in the {x}.
We had a picnic in the {x}.
= hospital
The ambulance took {name} to the {x}.
= church
They got married in the {x}.
= bridge
We walked across the {x} over the river.
= bank
{name} took out fifty pounds at the {x}.
= police
Someone stole my bike, so I called the {x}.
= shops shop
{name} went into town to go to the {x}.
= cinema
We saw a film at the {x}.
= pharmacy chemist
{name} bought some medicine at the {x}.
= lights
Stop when the traffic {x} are red.
= corner
The bakery is on the {x} of the street.
= town city
{name} grew up in a busy {x} with lots of shops.
= square
There is a market in the {x} on Saturdays.
"""

_ROUTINE_MORE = """
= Monday Tuesday Wednesday Thursday Friday
I go to work on {x}.
{name} has football practice every {x}.
= Saturday Sunday
We don't go to school on {x}.
On {x} we sleep late.
= January February March April May June July August September October November December
{name}'s birthday is in {x}.
School starts again in {x}.
= morning
{name} always feels sleepy early in the {x}.
= evening night
We watch television in the {x}.
= week
There are seven days in a {x}.
I go swimming twice a {x}.
= year
January is the first month of the {x}.
= alarm
My {x} goes off at seven.
{name} set {his} {x} for six o'clock.
= breakfast
{name} always eats {x} before work.
= bed
{name} goes to {x} at ten every night.
It's late, time for {x}.
= late early
{name} got up {x} this morning.
= weekend
What are you doing at the {x}?
= today tomorrow
What are you doing {x}?
= yesterday
I saw {name} {x}.
= minutes
There are sixty {x} in an hour.
The bus comes every ten {x}.
= hours
There are twenty-four {x} in a day.
The film lasted two {x}.
= clock watch
{name} looked at {his} {x}; it was already eight.
"""

_READING_MORE = """
= book novel
{name} couldn't put down that {x} about pirates.
I finished the {x} last night.
= pages
This book has three hundred {x}.
= author writer
Who is the {x} of this book?
= newspaper magazine
{name} reads the {x} on the train.
= poem
{name} wrote a {x} for {his} mother.
= letter
Grandma keeps every {x} that {name} sends her.
= envelope
Put the letter in an {x} and post it.
= pen
{name} signed the form with a blue {x}.
= notebook
{name} wrote the phone number in {his} {x}.
= glasses
I need my reading {x}.
= chapter
I read one {x} of my book every night.
= story
The {x} has a happy ending.
= library
You can borrow books from the {x}.
"""

# Every fact again, said in other words, and more of each scene's everyday knowledge: most
# facts above have one or two frames, and a model that meets a fact in only one frame learns
# that sentence rather than the fact. A block whose words repeat a block above is a second
# fact with the same words (drawn on its own); together they say each thing three or more ways.

_HOME_RETOLD = """
= fridge freezer
Is there any ice cream left in the {x}?
We put the fish in the {x} so it would stay fresh.
= light lights lamp television radio heater
Did you leave the {x} on all night again?
Please don't touch the {x} while your hands are wet.
= keys key
Have you seen my {x}? I've looked everywhere.
I will leave the {x} under the mat for you.
= bedroom bed
My little brother and I share a {x}.
{name} was tired, so {he} went straight to {his} {x}.
= bathroom
Somebody has been using the {x} for an hour!
Where is the {x}? I need to wash my hands.
= clean tidy
We spent the whole morning making the house {x}.
Is your desk {x} now? Then you can go out and play.
= dirty messy
Don't leave the living room so {x} tonight!
The children played in the mud and came home really {x}.
= garden yard
On sunny days we eat lunch outside in the {x}.
Our dog dug a big hole in the {x} yesterday.
= rent
How much {x} do you pay for your flat?
{name} could not pay the {x} this month, so {he} asked for more time.
Because the {x} went up, we moved to a cheaper flat.
= pillow blanket duvet
It was a cold night, so I asked for another {x}.
Do you need a {x} for the spare bed?
= sink dishwasher
Don't leave the dirty pans in the {x} overnight.
Is the {x} full of dirty dishes again?
= oven cooker stove
Careful, the {x} is still very hot!
My {relative} lit the {x} and started cooking.
= mirror
Before leaving, I take one last look in the {x}.
The bathroom {x} was covered in steam after the shower.
= stairs steps
Grandma can't climb the {x} any more, so she sleeps downstairs.
Don't run on the {x}, you might fall.
= roof
Snow covered the {x} all winter.
A workman climbed onto the {x} to fix the tiles.
= wall walls
You can hear the neighbours through the thin {x}.
Who drew on the {x} with a crayon?
= clock
Look at the {x}, it's time for bed.
The {x} stopped because the battery was flat.
= towel
Pack a big {x} for swimming at the beach.
After my bath I reached for a clean {x}.
= soap
This {x} smells of roses.
Did you use {x} when you washed your hands?
= plate bowl cup
Careful, don't drop that {x}, it's my favourite.
Can you get me a clean {x} from the cupboard?
= knife
Be careful, that {x} is very sharp.
Children should not play with a {x}.
= spoon
Yoghurt is easier to eat with a small {x}.
The baby can already eat with a {x}.
= vacuum broom
Where is the {x}? There is sand all over the floor.
The kitchen floor was sandy, so I got out the {x}.
Dad hung the {x} on a hook behind the kitchen door.
= neighbours neighbour
Our {x} looked after our cat while we were away.
Should we ask the {x} round for tea on {day}?
= room
This {x} gets the morning sun through its big window.
How many people sleep in this {x}?
= washing laundry
It's raining, so bring the {x} inside!
I put the dirty {x} in the basket by the machine.
= iron
Be careful, the {x} is still hot.
Where do you keep the {x}? My shirt is creased.
= candle candles
Blow out the {x} before you go to sleep.
We lit the {x} on the dinner table.
Don't leave the {x} burning in an empty room.
= toothbrush
I brush my teeth with my {x} twice a day.
Your {x} is the blue one next to the sink.
Don't forget to pack your {x} for the trip!
= toothpaste
Put a little {x} on your toothbrush.
We have run out of {x}, so add it to the shopping list.
The {x} tastes of mint.
= comb hairbrush
{name} brushed {his} hair with a {x}.
Where is my {x}? My hair is a mess.
I keep a {x} in my bag.
= alarm
My {x} rings at seven o'clock every morning.
I didn't hear the {x}, so I woke up late.
Did you set the {x} for tomorrow?
= doorbell bell
The {x} rang, so I went to open the door.
Nobody answered, though I pressed the {x} three times.
Our {x} is broken, so knock loudly.
= curtains blinds
Close the {x}, the sun is too bright.
Each morning {name} pulls back the {x} to let the sun in.
Our old {x} were so thin that the streetlight shone through.
= rubbish bin
Please take the {x} out tonight.
Don't throw the paper in the {x}, we recycle it.
The kitchen {x} is full again.
= tap
Fill the kettle from the cold {x}.
A plumber came to mend our leaking {x}.
Hot water comes out of the red {x}.
= upstairs downstairs
In our house all the bedrooms are {x}.
I heard a noise {x} in the night.
Go {x} and tell your sister dinner is ready.
= cushion
{name} put a soft {x} behind {his} back.
I threw a {x} at my brother as a joke.
We bought a red {x} for the sofa.
= wardrobe
I hang my clothes in the {x}.
Shirts and dresses hang neatly in my {x}.
The {x} is too full, so some shirts are on the chair.
= plants flowers
Don't forget to water the {x} while we are away.
We put {x} on the kitchen windowsill.
Our {x} grew tall over the summer.
= lock
The {x} on the front door is broken.
Turn the key in the {x} twice.
We changed the {x} after we lost our keys.
= dust
There is a lot of {x} under the bed.
The old books were covered in {x}.
I wipe the {x} off the shelves every week.
= warm cosy
Come inside, the house is nice and {x}.
With the fire on, the living room felt {x}.
We want the baby's room to be {x} in winter.
= hall
Leave your wet shoes in the {x}.
Our coats hang on hooks in the {x}.
The phone is on the small table in the {x}.
= garage
Dad parks the car in the {x}.
Our old bikes are in the {x}.
We keep the tools in the {x} next to the house.
= chores housework
On Saturdays we all help with the {x}.
I hate doing {x}, but someone has to do it.
Mum says no television until we finish the {x}.
= fireplace fire
On winter evenings we warm our hands by the {x}.
{name} put more wood on the {x}.
Keep the children away from the {x}, it's very hot.
"""

_FOOD_RETOLD = """
= water juice milk lemonade
Is there any more {x} in the fridge?
After the long walk, everyone wanted cold {x}.
= bakery baker shop supermarket market
Our nearest {x} sells warm rolls early every morning.
Is the {x} open on Sundays?
{name} bought a loaf of rye bread at the {x}.
= lunch
What did you bring for {x} today?
Most workers eat {x} around one o'clock.
= toast eggs cereal porridge fruit bread
Did you have {x} this morning before school?
For breakfast tomorrow we will have {x}.
= pasta rice chicken fish soup pizza curry
Shall we have {x} for dinner tonight?
My {relative} cooks the best {x} in the family.
= salt pepper
Would you hand me that {x}? My chips need some.
Don't put too much {x} on your chips.
= menu bill food drinks
Excuse me, could we have the {x}, please?
We waited a long time for the {x}.
= hungry
Are you {x}? There is some bread in the kitchen.
We walked all day, so by evening we were very {x}.
= thirsty
Salty food always makes me {x}.
Football practice always leaves me {x}.
= sweet delicious
Thank you for the meal, it was {x}!
The strawberries from the garden are really {x}.
= cream
Strawberries taste best with fresh {x}.
{name} whipped the {x} for the cake.
= oven cooker
Turn on the {x} before you start making the pizza.
Don't open the {x} while the cake is baking.
= knife
Spread the butter thinly with a {x}.
Hold the {x} in your right hand and the fork in your left.
= spoon
The baby eats porridge from a small {x}.
Add a {x} of sugar to the mixture.
= fork
The children ate their salad with a {x}.
Could I have a clean {x}? I dropped mine.
= plate
Finish everything on your {x} before dessert.
Could you pass me a clean {x}?
= full
I can't eat any more pudding because I'm {x}.
After that huge dinner we were all {x}.
= bread toast
Dip your {x} in the soup, it tastes great.
Warm {x} smells wonderful in the morning.
= butter jam honey
Do you want {x} on your bread?
We put the {x} back in the cupboard after breakfast.
= cheese ham
Is there any {x} left in the fridge?
Grandpa puts thick slices of {x} between his bread.
= cake
Who ate the last piece of {x}?
Grandma decorated the {x} with candles and cream.
= eggs
How do you like your {x}, fried or boiled?
We need six {x} to make this cake.
= rice pasta noodles
Boil the {x} in salty water for ten minutes.
Do you prefer {x} or potatoes?
= soup
In winter I like a hot bowl of {x}.
Don't blow on your {x} so loudly!
= apple banana orange
Eating one {x} a day is good for you.
I put the last {x} in my lunch box.
= salt pepper sugar
Don't add any more {x}, it's enough.
Where do you keep the {x}?
= sugar milk
Mum always adds a little {x} to her coffee.
I'd like my coffee with {x}, please.
= water juice
Kids, drink your {x} before it gets warm.
We drank {x} because it was so hot.
= breakfast lunch dinner
Shall we meet for {x} tomorrow?
{name} was late, so {he} missed {x}.
= hungry
Is anybody {x}? Dinner is ready.
I'm getting {x}, let's find a cafe.
= thirsty
If you are {x}, drink some water.
Running in the heat made us {x}.
Are you {x}? I can get you a drink.
= sweet
Honey from our own bees tastes so {x}.
This tea is too {x}, you put in too much sugar.
Children love {x} things like cake and sweets.
= sour
The milk has gone {x}, so don't drink it.
These green apples are a bit {x}.
Is the lemonade too {x}? Add more sugar.
= restaurant cafe
Let's go to that new {x} on {day}.
The {x} was so busy that we had to wait for a table.
= menu
The waiter gave us the {x} and we chose our food.
Is there any fish on the {x}?
= chips potatoes
Would you like {x} or rice with your chicken?
{name} peeled the {x} for dinner.
We had sausages with {x} last night.
= vegetables fruit
We grow our own {x} in the garden.
You should eat more {x} every day.
= chicken fish meat beef
I don't eat {x}, because I am a vegetarian.
How long do you cook the {x} for?
= pizza burger
We ordered a {x} because nobody wanted to cook.
Do you want cheese on your {x}?
Friday night is {x} night at our house.
= bottle glass
Could you fill this {x} with water?
{name} drank a whole {x} of juice.
Careful, don't break that {x} on the floor!
= knife
You need a sharp {x} to cut tomatoes.
{name} washed the {x} and put it away.
= recipe
Can you give me the {x} for this soup?
I found a good {x} for bread in a cookbook.
We followed the {x}, but the cake was still flat.
= kettle
Fill the {x} and make us some tea.
The {x} is boiling, the water is ready.
I put the {x} on when I got home.
= fridge
Leftover food goes straight into the {x}.
We keep the butter and cheese in the {x}.
The {x} is nearly empty, we need to go shopping.
= napkin
Wipe your mouth with a {x}.
Put a {x} next to each plate.
Fold the {x} neatly before the guests come.
= picnic
If it stays dry, we'll have a {x} by the lake.
Let's take sandwiches and fruit on the {x}.
{name} forgot the blanket for the {x}.
= spicy hot
This curry is too {x} for me.
Do you like {x} food?
Be careful, the chilli sauce is very {x}.
= pan saucepan
Fry the eggs in a {x} with a little oil.
{name} burnt the sauce because the {x} was too hot.
Boil the potatoes in a big {x}.
= dessert pudding
What's for {x}? I hope it's ice cream.
You can have {x} after you eat your vegetables.
We had apple pie for {x}.
= snack
I always have a small {x} after school.
An apple is a healthy {x}.
Do you want a {x} before dinner?
= chocolate sweets
Eating lots of {x} is bad for your teeth.
Grandma hides {x} for the grandchildren.
I keep some {x} in my desk drawer.
= bake cook
My {relative} taught me how to {x}.
I love to {x} on {day} afternoons.
Can you {x} something for the party?
= raw
Don't eat the chicken {x}, cook it first.
You can eat carrots {x} or cooked.
Eating {x} eggs can make you ill.
= salad
I had a green {x} with tomatoes.
We eat {x} with our dinner every night.
Mum serves a big {x} with every dinner.
= jar tin
Open the {x} of jam, please.
There's a {x} of beans in the cupboard.
I can't get the lid off this {x}.
= slice piece
Can I have another {x} of cake?
{name} cut a thin {x} of cheese.
There is one {x} of pizza left.
= fresh
This bread is {x} from the bakery.
The fish at the market is always {x}.
We only use {x} vegetables in our soup.
= tray
The waiter carried the drinks on a {x}.
Put the cups on the {x} and bring them here.
{name} brought {his} mother breakfast in bed on a {x}.
= vegetarian
I don't eat meat; I'm a {x}.
Is there anything {x} on the menu?
My sister became a {x} last year.
= bowl
I eat my cereal from a big {x}.
Put the salad in a {x} on the table.
The dog's food {x} is empty.
"""

_SCHOOL_RETOLD = """
= board blackboard whiteboard
Copy these new words off the {x} carefully.
{friend}, come and solve this sum on the {x}, please.
= pen pencil
Don't write in the textbook with your {x}.
Oh no, my {x} is still lying on my bedroom desk!
= books notebooks
Don't forget to bring your {x} tomorrow.
Our teacher collects our {x} every Friday.
= book story
The teacher read us a funny {x} about a dragon.
Have you finished the {x} yet? How does it end?
= classroom class
Our {x} is on the second floor.
Please don't eat in the {x}.
= school
What time does {x} start in the morning?
My little sister started {x} this year.
= answer
Underline your final {x} twice.
Is that the right {x}? Check it again.
= students pupils children
Thirty {x} squeezed into the small hall for assembly.
The {x} lined up in the playground after the bell.
= learn study
In the evening we {x} for the test.
Do you {x} French at your school?
Children {x} best when they are having fun.
= library
Please be quiet in the {x}.
Did you take that book out of the {x}?
= late
If you are {x} again, you will stay after school.
Why were you {x} this morning?
= pencil pen
Oops, I dropped my {x} under the desk.
You may only use a {x} in the exam.
= rubber eraser
Oops, I wrote the wrong letter; where's my {x}?
My {x} is in my pencil case.
Don't rub so hard with the {x}, you'll tear the page.
= ruler
Measure the line with your {x}.
Has anyone seen my {x}? I need to underline the title.
My {x} is thirty centimetres long.
= teacher
Please ask the {x} if you don't understand.
When I grow up, I want to be a {x}.
= students pupils children
At half past three the {x} go home.
Were the {x} quiet during the test?
= maths math history science english
Do you like {x}? I find it hard.
Tomorrow we have a test in {x}.
= classroom
Nobody is allowed to run in the {x}.
Our {x} has big windows and a blue door.
There are pictures on the walls of our {x}.
= board whiteboard
Can everyone see the {x} from the back?
Please wipe the {x} clean after the lesson.
= bag backpack
My school {x} is very heavy today.
Have you packed your {x} for tomorrow?
Don't leave your {x} on the floor.
= break lunch
At {x} the children eat in the playground.
We have twenty minutes for {x}.
What do you usually do at {x}?
= holidays holiday
What did you do in the summer {x}?
I can't wait for the {x}, then there's no school!
Our family camps by a lake every summer {x}.
= university college
After school I want to go to {x}.
My brother studies history at {x}.
Is {x} very different from school?
= lesson class
Don't talk during the {x}, please.
Our last {x} finished early today.
= answer
Do you know the {x}? Put up your hand.
Only one girl found the {x} to that puzzle.
= question
May I ask a {x}?
The teacher didn't understand my {x}.
That's a good {x}! Let's find out together.
= marks grades
My parents were happy with my {x} this year.
If you study, you will get better {x}.
What {x} did you get in the test?
= calculator
You may not use a {x} in this maths test.
{name} added up the numbers on {his} {x}.
My {x} needs a new battery.
= dictionary
Every new word is explained in the {x}.
If you don't know what a word means, use a {x}.
{name} got a thick French {x} for {his} birthday.
= playground
Lots of children chase each other around the {x}.
Don't run in the corridor, wait till you're in the {x}.
There are two swings in the {x}.
= bell
The {x} rings at nine, so don't be late.
When the {x} rang, everyone ran outside.
Lessons end when the {x} goes.
= uniform
At my school we wear a {x}.
{name} put on {his} school {x} and went downstairs.
The {x} is a blue jumper and grey trousers.
= timetable
According to the {x}, we have science after lunch.
Which lesson comes first on {day}? Look at the {x}.
Our new {x} starts next week.
= headteacher principal
The {x} talked to the whole school in assembly.
If you are naughty, you will be sent to the {x}.
Our {x} knows every pupil's name.
= subject
What is your favourite {x} at school?
Art is my best {x}.
I find maths the hardest {x}.
= spelling
We had a {x} test on Friday.
{name} checked the {x} of every word.
Your {x} is much better this term.
= desk
Each pupil sits at a {x}.
Please put your books under your {x}.
Don't write on the {x}!
= scissors glue
We need {x} to make the poster.
Our art teacher keeps the {x} on a high shelf.
Don't put the {x} in your mouth.
= term
The school year has three terms; this {x} is the longest.
The new {x} starts in September.
Last {x} I joined the chess club.
= friends classmates
At school I sit next to my {x}.
{name} played with {his} {x} at break.
Walking to school with my {x} is the best part of the day.
= page
Turn to {x} twenty in your book.
Somebody tore a {x} out of my exercise book.
Read the whole {x} before you answer.
= clever smart
{name} is very {x}; {he} always knows the answer.
You don't have to be {x} to learn, just work hard.
Are you {x} enough to solve this?
= trip
Everybody brought a packed lunch for the school {x}.
We have a school {x} to the zoo next week.
Our teacher is planning a {x} for the last week of term.
= mistakes
Everyone makes {x} when they are learning.
The teacher marked my {x} in red.
Don't worry, we learn from our {x}.
"""

_WORK_RETOLD = """
= office
The {x} is closed on Saturdays and Sundays.
Our {x} is on the fifth floor, next to the lift.
= job work
{name} loves {his} {x} because {he} helps people.
Do you like your new {x}?
= boss manager
My {x} told me to finish the report by Friday.
Is the {x} in today? I need to talk to her.
Our {x} is strict, but fair.
= meeting
The {x} went on for three hours.
Can we move the {x} to Thursday?
= computer laptop
Shut down your {x} when you go home tonight.
My {x} is too slow, so I need a new one.
= money pay
How much {x} do you get for this job?
{name} saves some of {his} {x} every month.
= nurse doctor
When I was ill, the {x} gave me some medicine.
Being a {x} means working some nights and weekends.
The {x} took my temperature.
= farmer
The {x} gets up very early to feed the animals.
Our neighbour is a {x}; he grows wheat and potatoes.
Would you like to be a {x} and live in the country?
= doctor nurse
If you feel ill, go and see a {x}.
The {x} checked my heart and my lungs.
= teacher
My mother has been a {x} for twenty years.
Does a {x} have long holidays?
= farmer
In spring the {x} plants seeds in the fields.
The {x} sells eggs and milk at the market.
= pilot
The {x} told us to fasten our seat belts.
Have you ever wanted to be a {x} and fly planes?
= driver
The {x} stopped the taxi outside our house.
{name} is a lorry {x}; {he} drives all over the country.
Our {x} didn't see the red light.
= chef cook
The {x} made a wonderful soup for us.
A good {x} always tastes the food before serving it.
= officer
A police {x} helped the lost child find her mother.
Ask that {x} for directions to the station.
Ring 999 and a police {x} will come.
= office
Our {x} has a kitchen where we make coffee.
I'll be at the {x} until six tonight.
= boss manager
The {x} gave everyone a day off after the busy week.
Don't be late, the {x} doesn't like it.
Ask the {x} if you can go home early.
= meeting
We talked about the new shop at the {x}.
Did you take notes at the {x}?
= job work
Finding a good {x} is not easy.
{name} lost {his} {x} when the factory closed.
= salary money
{name} spends most of {his} {x} on rent.
Is the {x} good in that job?
{name} puts part of {his} {x} in the bank.
= computer laptop
{name} works at {his} {x} from nine till five.
Can I use your {x} to check my email?
I carry my {x} to work in a bag.
= holiday
Where are you going on {x} this year?
After months of hard work, {name} really needs a {x}.
{name} took a week's {x} in the summer.
= retired
When I'm {x}, I will travel around the world.
My grandparents are {x}, so they have lots of free time.
{name} {x} at sixty-five and started gardening.
= colleagues
My {x} gave me a card on my birthday.
I work with very friendly {x}.
We go out for dinner with our {x} at Christmas.
= shop factory
The {x} opens at eight and closes at six.
Hundreds of people work in that {x}.
My {relative} has worked in the {x} for years.
= dentist
The {x} checked my teeth and said they were fine.
I go to the {x} twice a year.
Are you scared of the {x}?
= waiter waitress
We gave the {x} a tip because the service was so good.
Excuse me, {x}, could we have some water?
The {x} wrote down our order.
= builder
The {x} put a new roof on our house.
My uncle is a {x}; he builds walls and houses.
We hired a {x} to make our kitchen bigger.
= postman
Has the {x} been yet today?
The {x} left a parcel with our neighbour.
Our dog always barks at the {x}.
= uniform
Nurses and police officers wear a {x} at work.
{name} washed {his} work {x} for Monday.
Do you have to wear a {x} in your job?
= interview
{name} was nervous before {his} job {x}.
I have an {x} for a new job tomorrow.
Wear smart clothes to the {x}.
= busy
I can't talk now, I'm very {x} at work.
Mondays are always {x} in the shop.
The restaurant gets really {x} at lunchtime.
= email emails
I read my {x} on the train to work.
{name} answers {his} {x} before lunch.
Did you get my {x}?
= desk
My {x} is covered in papers.
{name} sits at {his} {x} all day.
I put a photo of my family on my {x}.
= printer
Our office {x} makes a terrible noise.
Can you send the document to the {x}?
Our {x} is broken again, so I can't print the letter.
= phone
{name} answered the {x} and said hello.
I'll call you on the {x} after work.
My {x} keeps ringing during meetings.
= hospital
Doctors and nurses work in a {x}.
{name} was taken to {x} in an ambulance.
My aunt works at the {x} at night.
= shift
The nurse works a night {x} this week.
{name}'s {x} starts at six in the morning.
After a long {x}, I just want to sleep.
= customers
Our first {x} arrive as soon as the doors open.
Be polite to the {x}.
A waiter brings {x} their food.
= police
The {x} came when someone stole my bike.
Call the {x} if you see a crime.
My cousin joined the {x} last year.
= mechanic
The {x} fixed our car in an hour.
Take your car to a {x} if it makes a strange noise.
My car broke down, so I phoned a {x}.
= tools
A builder carries {x} in the van.
{name} keeps {his} {x} in a metal box.
We need the right {x} to fix the bike.
= break
At one o'clock we have a short {x}.
I eat a sandwich at my desk during my {x}.
How long is your {x}?
= weekend
I don't work at the {x}.
What are you doing this {x}?
After a busy week, we relaxed all {x}.
= firefighter
A {x} put out the fire.
The {x} climbed the ladder to save the cat.
{name} wants to be a {x} when {he} grows up.
= hairdresser
{name} booked an appointment with the {x} for a haircut.
My {x} cut my hair too short!
A {x} washes, cuts and dries people's hair.
= report
I have to finish this {x} by tomorrow.
The boss read the {x} and asked some questions.
Did you read the {x} I sent you?
= coffee tea
At work I drink too much {x}.
Let's have a {x} before the meeting.
{name} made {x} for everyone in the office.
= early
I have to get up {x} for work tomorrow.
{name} left work {x} because {he} was ill.
The baker starts work very {x}.
"""

_SHOPPING_RETOLD = """
= money cash
Don't spend all your {x} on sweets!
Did you bring enough {x} for the shopping?
Without enough {x}, {name} put the bread back on the shelf.
Have you got any {x} in your pocket?

= card cash
Are you paying by {x} today?
I never pay by {x} at the market.

= card
The machine didn't accept my {x}, so I paid in cash.
Please put your {x} into the machine.

= cost
How much will the new phone {x}?
Strawberries {x} more in winter than in summer.

= expensive cheap
Why are the shoes in this shop so {x}?
The hotel wasn't {x} at all.

= shop store supermarket
Is the {x} open on {day}?
We walked to the {x} because we needed bread.
Does the {x} sell fresh fish?

= buy
Did you {x} anything nice in town?
Don't {x} more than you need.

= size
This shirt is the wrong {x}, so I took it back.
Which {x} do you wear?
The shoes didn't fit, so {name} asked for another {x}.

= price
The {x} of bread went up again.
Can you tell me the {x} of these apples?
{name} checked the {x} before buying the coat.

= bag basket
Can you carry the {x} for me?
I left my {x} at the checkout.

= small big
Is this hat too {x} for me?
The shirt was too {x}, so {name} took it back.

= wallet purse
Have you seen my {x}? I can't find it.
{name} rushed back home because {he} had forgotten {his} {x}.

= cheap
Fruit is {x} in summer because there is lots of it.
Is there anything {x} in this shop?

= expensive
Why is this phone so {x}?
Houses in the city are very {x}.

= supermarket shop market
Which {x} does your family usually use?
We bought fruit and vegetables at the {x}.

= receipt
The shop assistant printed a {x} for every customer.
You can't return it without the {x}.

= change
{name} counted {his} {x} twice before leaving the till.
Shop assistants sometimes hand back too little {x}.

= basket trolley
Grab a {x} and we'll start shopping.
By the end our {x} was full of food.

= bakery baker
Is the {x} open this early?
We ordered a birthday cake from the {x}.

= sale
I bought this jacket in the {x}, so it was cheap.
When does the {x} start?

= bank
{name} took some money out at the {x}.
Is the {x} closed on Sundays?

= queue line
Please wait in the {x}.
We stood in a {x} for twenty minutes.

= customer customers
The shop assistant smiled at the {x}.
Did the {x} pay before leaving?

= bag
Do you need a {x}, or can you carry it?
I forgot my shopping {x} again.

= list
Don't forget the shopping {x}.
{name} wrote a {x} before going to the shops.
What's on the {x} today?
I lost my {x}, so I forgot the eggs.

= till checkout
We paid for everything at the {x}.
Is there a long queue at the {x}?
Everybody queues at the {x} before going home.

= shopkeeper cashier
The {x} put the bread in a paper bag.
Did the {x} give you a receipt?
Ask the {x} where the milk is.

= butcher
We buy our meat at the {x}.
The {x} sells sausages and chicken.
Is the {x} still open?

= pay
Where do I {x} for this?
You have to {x} before you leave the shop.
{name} forgot to {x} for the milk.

= sell
Does this shop {x} batteries?
Shops {x} more toys at Christmas.
The farmers {x} their eggs at the market.

= open closed
Is the shop {x} on Sunday?
The bakery was {x} when we got there.
Was the chemist {x} when you went past?

= discount
The shop gave us a {x} because the box was broken.
Old people often get a {x} on Tuesdays.
Is there any {x} for buying three tins?

= pounds dollars euros
The shirt cost twenty {x}.
I only have five {x} left.
How many {x} is this watch?

= coins
The machine only takes {x}.
{name} counted the {x} in {his} money box.
There are some {x} at the bottom of my bag.

= shopping
We go {x} every Saturday.
Who carried the {x} home?
{name} hates {x} when the shops are busy.

= try
Can I {x} on these shoes?
You should {x} it on before you buy it.
{name} wanted to {x} on the red dress.

= mall centre
The shopping {x} has a cinema and lots of cafes.
We met our friends at the shopping {x}.
Is there a shopping {x} in {place}?

= bread milk eggs
We ran out of {x}, so I went to the shop.
Can you buy some {x} on the way home?
I need {x} from the supermarket.

= clothes
This shop sells {x} for children.
{name} bought new {x} for school.
Where did you buy your {x}?

= return
Can I {x} this dress if it doesn't fit?
{name} had to {x} the broken toaster.
You can {x} it within thirty days.

= chemist pharmacy
You can buy medicine at the {x}.
The nearest {x} closes at seven in the evening.
{name} picked up the pills from the {x}.
"""

_TRAVEL_RETOLD = """
= airport
Our taxi reached the {x} just in time.
We arrived at the {x} early, so we had a coffee.
{name} will meet us at the {x}.
Is the {x} far from the city?

= station
Is the {x} far from here?
I'll meet you outside the {x}.
We ran to the {x} because we were late.

= plane
Have you ever been on a {x}?
The {x} was late because of the fog.
We'll go by {x}, because it's faster.
Our {x} flew high above the clouds.

= train bus
Which {x} goes past the hospital?
We will take the {x}, because it's cheaper.
Every seat on the {x} was taken, so {name} stood.

= car
Where did you park the {x}?
We washed the {x} on Sunday.
Our {x} broke down on the way to {place}.

= bike bicycle
Did you lock your {x}?
{name} cleans {his} {x} every weekend.
My {x} has a flat tyre, so I'll walk.
Don't ride your {x} without a helmet.

= tickets
Where can we buy {x} for the train?
We didn't have {x}, so we couldn't get on.

= holiday
Where are you going on {x} this year?
We had a lovely {x} by the sea.

= passport
Has anybody seen my {x}? We're flying today!
Is your {x} still valid?
The man at the border checked my {x}.

= suitcase bag
My {x} is too heavy to carry.
{name} dragged {his} heavy {x} up the stairs.

= map
Can you read a {x}?
Let's check the {x} before we set off.
{friend} sketched a little {x} showing the way to the lake.

= road street
Our house is on a quiet {x}.
Don't play in the {x}!
Which {x} does your friend live on?

= ticket tickets
Did you buy the {x} online?
The driver asked to see our {x}.
I lost my {x}, so I had to pay again.

= suitcase luggage bags
Where did you leave your {x}?
We put our {x} in the boot of the car.

= hotel
Is the {x} near the beach?
Our {x} had a pool and a big garden.

= petrol fuel
We need to stop for {x} soon.
The car is low on {x}.

= boat ship ferry
Have you ever been seasick on a {x}?
Tomorrow morning we'll sail to the island on a {x}.

= licence
You can't drive without a {x}.
Do you have a driving {x}?

= taxi
Let's phone for a {x}; it's raining hard.
The {x} driver helped us with our bags.

= seatbelt
Did everybody put on their {x}?
The driver told us to fasten our {x}.

= holiday trip
How was your {x}? Did you have fun?
Our family is planning a {x} somewhere warm.

= traffic
The {x} is terrible in the morning.
We were late because of the {x}.
There wasn't much {x} on {day}.

= pilot
The {x} flies the plane.
Our {x} said we would land soon.
Who is the {x} on this flight?

= driver
The bus {x} stopped at every corner.
A taxi {x} took us to the hotel.
Ask the {x} where to get off.

= platform
The train to London leaves from {x} two.
We waited on the {x} for the train.
Which {x} does our train leave from?

= seat
Excuse me, is this {x} taken?
{name} gave {his} {x} to an old lady on the bus.
I'd like a window {x}, please.

= helmet
A {x} keeps your head safe if you fall off your bike.
{name} put on {his} {x} before cycling.
Where is my bike {x}?

= wheels
A bicycle has two {x}, and a car has four.
The {x} of the car were covered in mud.
How many {x} does a lorry have?

= left right
Turn {x} at the traffic lights.
Go straight on and then take the first {x}.
Is the bank on the {x}?

= late early
Our flight was {x} this morning.
Were you {x} for the bus?
{name} got to the airport an hour {x}.

= arrive
What time does the train {x}?
We will {x} in Paris at six.
Call me when you {x}.

= lights
Stop when the traffic {x} are red.
Wait for the traffic {x} to turn green.
Everybody waited because the traffic {x} were broken.

= journey
The long {x} north made the children sleepy.
Have a safe {x} and call us when you get there!
The {x} took three hours by car.

= postcard
{name} sent us a {x} from Spain.
Did you get my {x}?
We always write a {x} to Grandma on holiday.

= camera
Don't forget the {x}; we'll want photos.
{name} took lots of photos with {his} new {x}.
Whose {x} is this on the back seat?

= abroad
Have you ever been {x}?
We are going {x} next summer.
{name} works {x} now and comes home at Christmas.

= passengers
The bus was full of {x}.
How many {x} can the plane carry?
All {x} must show their tickets.

= motorway
Cars drive fast on the {x}.
Driving on the {x} is quicker than through the villages.
Bikes aren't allowed on the {x}.

= tent
We slept in a {x} by the lake.
It took {name} an hour to put up the {x}.
It rained and our {x} got wet.
"""

_WEATHER_RETOLD = """
= cold freezing
Was it {x} in the mountains?
Close the window, please; everyone is {x} in here.
Without gloves, {name}'s fingers got {x}.
It was so {x} that the pond turned to ice.

= hot warm sunny
Is it {x} in {place} today?
Tomorrow will be {x}, so bring sun cream.
It was {x}, so we had lunch in the garden.

= blue
Without any clouds, the sky looks bright {x}.
Why is the sky {x}?

= grey dark
When the sky gets {x}, rain is coming.
Why is the sky so {x} this morning?

= snow
Will there be {x} at Christmas?
We threw balls of {x} at each other.
The roads were closed because of the {x}.

= ice
Don't walk on the {x}; it might break.
I slipped on the {x} and fell over.
Put some {x} in my drink, please.

= wind
The {x} was so strong that the fence fell down.
A cold {x} is coming from the north.
Can you hear the {x} outside?

= shining
The sun was {x} when we woke up.
Is the sun {x} today?
Because the sun was {x}, we ate lunch outside.

= winter
We wear warm coats in {x}.
Do you like {x} more than summer?
Next {x} we want to go skiing.

= summer
Schools close for six weeks in the {x}.
Last {x} we went camping.
Do you like swimming in the {x}?

= spring
Each day grows a little longer in {x}.
Lambs are born in {x}.
We plant seeds in {x}.

= autumn
In {x} it gets dark earlier.
{name} likes to kick the leaves in {x}.
We pick apples in {x}.

= wet
Don't sit on the grass, it's {x}.
My shoes are {x} because I stepped in a puddle.

= weather
The {x} was lovely on {day}.
Is the {x} going to be good for the picnic?
What will the {x} be like tomorrow?

= sunny hot warm
I hope it will be {x} for our trip.
It isn't {x} today, so take a jumper.

= raining rainy wet
Was it {x} when you came in?
It was {x}, so we stayed inside.

= cloudy grey
Is it still {x} outside, or can we see the sun?
It was {x} all day, and we didn't see the sun.

= storm thunder
Are you scared of the {x}?
The dog hid under the bed during the {x}.

= coat jacket scarf gloves
It's freezing, so {name} grabbed {his} {x} before going out.
Where did you put my {x}?

= sunglasses hat
Have you got your {x}? It's very bright.
At the beach {name} always wears {his} {x}.

= umbrella
It's raining; may I borrow an {x}?
As soon as the first drops fell, {name} opened {his} {x}.

= sun
The {x} sets in the west.
Don't look straight at the {x}.
The {x} came out after the rain.

= rainbow
Red, orange, yellow, green and blue all appear in a {x}.
Look, there's a {x} over the hill!

= temperature
What's the {x} outside today?
In summer the {x} can reach thirty degrees.

= fog
The {x} was so thick we couldn't see the houses.
Drive slowly in the {x}.

= puddles
The children jumped in the {x}.
After the rain the road was full of {x}.
Don't step in the {x} in your new shoes!

= boots wellies
Put your {x} on, it's muddy outside.
{name} wears {his} {x} in the rain.
Where are my {x}? I want to play in the snow.

= lightning
We saw {x} in the sky during the storm.
First comes the {x}, and then the thunder.
Stay inside when there is {x}.

= clouds
Rain falls from the {x}.
Grey {x} covered the sky all afternoon.
Look at those dark {x}! It's going to rain.

= forecast
The {x} says it will rain tomorrow.
Did you check the weather {x}?
According to the {x}, the weekend will be sunny.

= thermometer
A {x} tells you how hot or cold it is.
Look at the {x}; it's ten degrees.
Our {x} says it is below zero.

= sunscreen
Put on some {x}, or you'll get burnt.
{name} forgot {his} {x} and got a red nose.
Don't forget the {x} at the beach.

= snowman
We gave our {x} a carrot for a nose.
The {x} melted when the sun came out.
Let's make a {x} in the garden!

= melted
The snow {x} in the sun.
The ice cream {x} because it was so hot.
By lunchtime all the ice had {x}.

= degrees
It's twenty {x} today, so it feels warm.
Water freezes at zero {x}.
The temperature fell to two {x} last night.

= dry
After a week without rain the ground was {x}.
Hang the washing outside to {x}.
Is it {x} enough to play outside?

= heat
The {x} made everyone tired.
The dog lay in the shade to escape the {x}.
We can't sleep in this {x}.

= shade
Let's sit in the {x} under the tree.
It's too hot in the sun, so stay in the {x}.
Our dog likes lying in the {x} on hot afternoons.

= windy
It's {x}, so let's fly a kite.
It was so {x} that my umbrella broke.
Is it {x} by the sea today?

= kite
On windy days we fly a {x}.
My {x} got stuck in a tree.
{name} made a {x} out of paper and string.

= flood
After days of rain there was a {x} in the village.
The river rose and caused a {x}.
Our kitchen was under water after the {x}.

= seasons
There are four {x} in a year.
Which of the four {x} is your favourite?
The {x} change every three months.
"""

_ANIMALS_RETOLD = """
= dog dogs
We feed our {x} twice a day.
Keep the {x} out of the kitchen while we cook.

= cat cats
{name} gave the {x} some milk.
The {x} didn't come home last night.

= cows
The {x} lay down because it was going to rain.
Do {x} sleep standing up?
We walked past the {x} on our way to the farm.

= hens chickens
Where do the {x} sleep at night?
We keep {x} in the back garden.
The fox tried to catch our {x}.

= nest nests
Birds make their {x} from twigs and grass.
Did you see the baby birds in the {x}?

= sheep
The dog helped the farmer move the {x}.
Have you ever counted {x} to fall asleep?
The {x} are eating grass on the hill.

= horse
Can you ride a {x}?
The {x} pulled the cart up the hill.

= fish
Do you keep {x} as pets?
{name} feeds the {x} in {his} tank every morning.
The {x} swam away when I put my hand in the water.

= mouse
A {x} lives in the wall of our house.
Is that a {x} under the sofa?
The {x} ran into a little hole.

= farm
We visited a {x} and saw the pigs.
Does your uncle still live on the {x}?
The farmer works on the {x} from morning to night.

= vet
The {x} gave our cat an injection.
Is the {x} open on Saturday?
The {x} said my dog needs to lose weight.

= animals
Which {x} do you like best?
Wild {x} live in the forest.

= dog
Our {x} sleeps in a basket by the fire.
Is that your {x} sleeping under the table?

= dogs
Do your {x} get on with cats?
{name} is afraid of big {x}.

= cat kitten
Our {x} sleeps all day.
Is the {x} hungry? It keeps crying at its bowl.

= bees
The {x} flew from flower to flower.
Are you afraid of {x}?

= spider
There is a {x} in the bath!
The {x} caught a fly in its web.

= duck ducks
Did you hear the {x} quacking?
Don't feed the {x} too much bread.

= pig pigs
The farmer gave the {x} some food.
We could hear the farmer's {x} grunting near the barn.

= lion tiger
Is the {x} sleeping in its cage?
A {x} eats meat, not grass.

= elephant
Have you ever seen an {x} at the zoo?
The baby {x} walked next to its mother.

= monkey
The {x} swung from branch to branch.
Look at the {x}; it's eating!

= rabbit
Our {x} lives in a hutch in the garden.
Can I hold the {x}?

= zoo
We will go to the {x} on {day}.
Have you ever been to the {x}?

= pets
{name} isn't allowed any {x} in {his} flat.
How many {x} have you got?
Looking after {x} teaches children to be kind.

= barked
Why has the dog {x} all morning?
The dog {x} when someone knocked on the door.

= milk
The calf drank {x} from its mother.
Goats give {x} too, not only cows.

= wool
This jumper is made of {x}.
My grandmother knits with {x}.

= nest
The bird built its {x} high in the tree.
Look, there are three eggs in the {x}!

= moo
What does a cow say? It says {x}.
The cows went {x} in the field.
The baby laughed when the cow said {x}.

= quack
Ducks go {x} when they want bread.
What does a duck say? It says {x}.
The duck said {x} and swam away.

= meow miaow
The cat said {x} because it was hungry.
What does a cat say? It says {x}.
Our kitten cried {x} at the door.

= puppy
When a dog is very young, we call it a {x}.
{name} got a {x} for {his} birthday.
The {x} chewed my slipper.

= kitten
A young cat is a {x}.
The {x} is playing with a ball of wool.
Can we keep the {x}?

= lamb
Every spring the ewe gives birth to a {x}.
In spring we saw a {x} in the field.
The {x} stayed close to its mother.

= calf
A young cow is known as a {x}.
The {x} was born last night.
The {x} drinks its mother's milk.

= kennel
A dog sleeps in a {x}.
{name} built a {x} for the dog.
Our dog won't go in its {x} when it rains.

= stable
A horse lives in a {x}.
The horses sleep in the {x}.
{name} cleaned the {x} every morning.

= hive
Bees live in a {x}.
Honey comes from the {x}.
Don't go near the bees' {x}!

= bone
Dogs love to chew a {x}.
Our dog hid a {x} under the sofa.
Give the dog a {x}.

= tail
A monkey can hang by its {x}.
The cat's {x} stood up when it saw the dog.
Don't pull the dog's {x}!

= feathers
Birds are covered in {x}.
Soft {x} float down when the hens shake themselves.
The parrot has bright green {x}.

= wings
Birds fly with their {x}.
A butterfly has beautiful {x}.
The bird opened its {x} and flew away.

= grass
Cows and sheep eat {x}.
Horses spend all day eating {x} in the meadow.
Rabbits like to eat fresh {x}.

= carrots
Rabbits love crunchy {x} from the garden.
We gave the horse some {x}.
{name} fed the donkey two {x}.

= fur
The cat has soft {x}.
Bears have thick {x} to keep warm.
The dog's {x} was wet after the walk.

= wild
Lions are {x} animals, not pets.
Have you seen any {x} animals in the forest?
Wolves still live in the {x} in some countries.

= cage
The bird lives in a {x}.
The hamster escaped from its {x}.
Please close the {x} door.

= owl
An {x} hunts at night.
We heard an {x} in the woods last night.
An {x} has big round eyes.
"""

_BODY_RETOLD = """
= teeth
Don't forget to clean your {x} before bed.
Sweets are bad for your {x}, so eat fewer of them.
= hair
{name} had {his} {x} cut on Saturday.
Your {x} is wet; dry it before you go out.
= hands face
Go and wash your {x}; dinner is ready.
I washed my {x} with cold water this morning.
= water
You should drink plenty of {x} when you have a fever.
It was very hot, so we drank lots of {x}.
= arm leg
The doctor put {name}'s {x} in plaster.
Did it hurt when you broke your {x}?
= doctor
My throat is sore, so I've booked a visit to the {x}.
Did the {x} give you anything for your cough?
= bed
{name} has a fever, so {he} must stay in {x} today.
Go back to {x}; you are still not well.
= ill sick
My little brother felt {x} all weekend.
You look pale. Are you {x}?
= medicine
Did you take your {x} this morning?
This {x} tastes awful, but it will help you.
= hospital
Nurses and doctors work at the {x}.
Will you visit me at the {x} tomorrow?
= eyes
I can't see well because my {x} are tired.
Open your {x}, it's time to get up!
= ears
Put your hands over your {x} if the noise is too loud.
My {x} hurt after the noisy party.
= tired sleepy
Nobody spoke in the car; we were all so {x}.
Are you {x}? You keep yawning.
= headache cold
I've had a {x} since Monday, so I feel awful.
Why don't you lie down if you have a {x}?
= crying
Why is the little boy {x}? Did he fall over?
The baby stopped {x} when her mum picked her up.
= hungry tired
We walked all day, so we were very {x}.
After football, the children came home {x} and cross.
= teeth
Your {x} will stay strong if you brush them well.
Babies have no {x} when they are born.
= hair
{name} washes {his} {x} every morning.
Will you cut my {x} short, please?
= eyes
Don't rub your {x} with dirty hands.
We see with our {x}.
= ears
Rabbits and donkeys have very long {x}.
Keep your {x} warm with a hat in winter.
= nose
Blow your {x}, please; here is a tissue.
My {x} is red because I have a cold.
= hands
Put your {x} up if you know the answer.
{name} warmed {his} {x} by the fire.
= feet
My new shoes hurt my {x}.
Take off your wet socks and dry your {x}.
= head
{name} hit {his} {x} on the low door.
Put a hat on your {x}; it's cold outside.
= headache cold fever
Does your son still have a {x}?
You won't go to school tomorrow if you still have a {x}.
= doctor
The {x} listened to my chest.
When did you last see a {x}?
= medicine pills
The nurse gave {name} some {x}.
Keep the {x} away from small children.
= hospital
The nurse works at the {x} near the station.
{name} was born in this {x}.
= ill sick
{name} was {x} for a week last winter.
If you feel {x}, tell the teacher.
= tired
You look {x}. Did you sleep badly?
Let's stop here, because the little ones are {x}.
= leg arm
My {x} hurts, so I can't play today.
The nurse put a bandage on {name}'s {x}.
= heart
Your {x} beats faster when you run.
The doctor listened to my {x}.
= fingers
{name} counted to ten on {his} {x}.
Don't put your {x} near the hot pan.
= toes
Sand got between my {x} at the beach.
Wiggle your {x} in the warm water.
= mouth
Cover your {x} when you cough.
We eat and speak with our {x}.
= dentist
I go to the {x} twice a year.
The {x} pulled out my bad tooth.
= glasses
{name} wears {x} for reading.
Where did I put my {x}? I can't see a thing.
= sleep
Babies need a lot of {x}.
The dog barked all night, and nobody could {x}.
= exercise
Doctors say {x} is good for the heart.
{name} does some {x} every morning before breakfast.
= cough
{name} has a bad {x}, so {he} drinks honey and lemon.
Put your hand over your mouth when you {x}.
Grandpa's {x} kept everyone awake all night.
= thermometer
The nurse took my temperature with a {x}.
Put the {x} under your tongue.
Where is the {x}? I think you have a fever.
= plaster bandage
Put a {x} on that cut.
The nurse put a {x} on my knee.
Do you have a {x}? I cut my finger.
= nurse
The {x} brought me a glass of water.
A {x} helps the doctors in the hospital.
{name}'s mother has been a {x} for twenty years.
= knee knees
{name} fell off {his} bike and hurt {his} {x}.
Bend your {x} when you lift something heavy.
The water only came up to my {x}.
= stomach tummy
Too many sweets gave me a pain in my {x}.
{name} went to bed early with a sore {x}.
Does your {x} still hurt?
= throat
My {x} is sore, so I can't talk much.
Hot tea with honey is good for a sore {x}.
The doctor looked at my {x} and said it was red.
= ambulance
Call an {x}! He's badly hurt.
The {x} raced to the hospital with its lights on.
An {x} came quickly after the accident.
= fruit vegetables
Eat lots of {x} to stay healthy.
Doctors say we should all eat more {x}.
Children who eat {x} every day grow strong.
= healthy fit
If you exercise often, you'll stay {x}.
{name} runs every day to keep {x}.
Is it hard to stay {x} in winter?
= sneeze
Pepper always makes me {x}.
Use a tissue when you {x}.
Flowers make {name} {x} in the spring.
= tissue
Do you have a {x}? My nose is running.
{name} blew {his} nose on a {x}.
Throw the used {x} in the bin.
= blood
There was {x} on my knee after I fell.
The heart pumps {x} through the body.
The nurse took some {x} from my arm.
= better
I hope you feel {x} soon.
After two days in bed, {name} felt much {x}.
Are you feeling {x} today?
= fever temperature
{name} has a high {x}, so {he} is staying in bed.
Does the baby have a {x}?
The nurse said my {x} was very high.
= awake asleep
Is the baby {x} yet, or should I wait?
{name} was still {x} at midnight.
Were you {x} when the phone rang?
= bones
We have more than two hundred {x} in our body.
Milk is good for your {x}.
The x-ray showed the {x} in my hand.
"""

_FAMILY_RETOLD = """
= older younger
Is your brother {x} than you?
Which of you is {x}, you or your cousin?
= old
My grandmother is very {x} now, but she still walks every day.
How {x} will you be next year?
= birthday
In which month is your {x}?
We sang a song and ate cake on my {x}.
= brother sister
On rainy days I play board games with my {x}.
Does your {x} go to the same school as you?
= baby
Be quiet, the {x} is asleep.
When was the {x} born?
= parents
My {x} both work in town.
Did your {x} say you could come?
= grandmother grandfather grandparents
My {x} told us stories about the old days.
We're going to see my {x} on Sunday.
= friend
Thanks for helping me; you're a kind {x}.
Will you be my {x}?
= friends
{name} has lots of {x} at school.
We've been {x} since we were six.
= people
How many {x} came to the party?
Twenty {x} came to the wedding.
= married
When did your parents get {x}?
My sister will get {x} next summer.
= mother mum father dad
My {x} drives me to school every day.
Ask your {x} if you can stay for tea.
= sister brother
Do you have a {x}?
My big {x} helps me with my homework.
= grandmother grandma grandfather grandpa
My {x} is eighty years old.
We baked a cake with my {x} last weekend.
= aunt uncle
My {x} lives in {place}.
We stayed with my {x} for the summer holidays.
= uncle
My {x} is married to my aunt.
My {x} and his wife are coming for dinner.
= aunt
My {x} and her husband came for dinner.
My {x} is my mum's sister.
= cousin cousins
I played with my {x} at the wedding.
My {x} and I went to the beach together.
= baby
The {x} can't walk yet.
We gave the {x} a bath and put her to bed.
= wedding
The bride wore a long white dress at the {x}.
Who did you dance with at the {x}?
= wife husband
{name}'s {x} is a teacher.
My {x} cooks dinner on Sundays.
= birthday
My {x} is in May.
{name} got a new bike for {his} {x}.
= friend friends
I'm going to play with my {x} after school.
{name} invited {his} {x} to the party.
= son daughter
Their {x} is at university now.
My {x} was born three years ago.
= parents
Children should listen to their {x}.
{name}'s {x} came to see the school play.
= twins
My aunt had {x}, a boy and a girl.
Can you tell the {x} apart?
= present gift
Thank you for the lovely {x}!
Have you opened your {x} yet?
= party
{name} invited ten children to {his} {x}.
Did you enjoy the {x}?
= family
All my {x} came together for grandma's ninetieth.
Do you have a big {x}?
= grandchildren
My grandmother has six {x}.
Grandparents love to spoil their {x}.
How many {x} does your grandpa have?
= nephew niece
My {x} is my sister's child.
I bought my {x} a book for Christmas.
My {x} is coming to stay with us next week.
= born
{name} was {x} in {place}.
In what year were you {x}?
My little sister was {x} last year.
= bride groom
The {x} looked very happy at the wedding.
Everyone clapped when the {x} arrived at the church.
Did the {x} make a speech?
= dinner
The whole family eats {x} together every evening.
Who is cooking {x} tonight?
We talked about our day over {x}.
= kiss hug
Give your grandma a {x} goodbye.
{name} gave {his} mum a big {x}.
Come here and give me a {x}!
= candles
{name} blew out the {x} on {his} birthday cake.
Dad lit the {x} and we turned off the lights.
There were ten {x} on my cake this year.
= cake
Mum baked a birthday {x} for me.
We cut the {x} and sang "Happy Birthday".
Who wants a piece of {x}?
= proud
My parents were {x} of me when I passed the test.
{name}'s dad was very {x} when {he} won.
I'm so {x} of you!
= ring
He gave her a {x} when they got engaged.
{name} wears a gold {x} on {his} finger.
She lost her wedding {x} in the garden.
= grow
Children {x} so fast that their clothes soon stop fitting.
Puppies and children {x} very quickly.
Look how tall you are; you {x} every year.
= only
{name} is an {x} child; {he} has no brothers or sisters.
Are you an {x} child?
Being an {x} child can be lonely sometimes.
= surname
My {x} is the same as my father's.
Excuse me, what's your {x}, please?
Please write your first name and your {x}.
= visit
We {x} my grandparents every summer.
Will you {x} us at Christmas?
My aunt came to {x} us last week.
= argue
My brother and I {x} about the TV.
Don't {x} with your sister!
Do you and your brother {x} a lot?
= miss
I {x} my grandmother because she lives far away.
We'll {x} you when you go.
Did you {x} me while I was away?
= holiday
Our family goes on {x} every summer.
Where did you go on {x}?
Two weeks of {x} by the lake was wonderful.
"""

_ART_RETOLD = """
= piano guitar drums violin
My brother is learning the {x}.
I'd like to learn the {x} one day.
= song songs
Which {x} did you like best?
The children learned the {x} by heart.
= picture painting
Do you know who painted this {x}?
That {x} is very old and famous.
= music
What kind of {x} do you like?
{name} can't study without {x}.
= film movie
Let's watch a {x} tonight.
What was the {x} about?
= cinema
Shall we see a film at the {x} this weekend?
The {x} smelled of popcorn.
= museum gallery
Is the {x} open on Sundays?
There are famous statues in the city {x}.
= dance
I can't {x}, but I love to watch.
Will you {x} with me at the party?
= piano guitar violin drums
How long have you played the {x}?
{name} played the {x} at the school concert.
= song songs
I can't remember the words of the {x}.
Did you hear the new {x} on the radio?
= singer band
Who is your favourite {x}?
The {x} signed autographs after the show.
= concert
Did you enjoy the {x}?
We're going to a {x} on Saturday.
= paint paints brush
Be careful; don't drop the {x}.
Where did you put my {x}?
= picture painting
The {x} shows a ship in a storm.
I like the colours in this {x}.
= museum gallery
You mustn't touch the paintings in the {x}.
The {x} is free for children.
= film movie
The {x} was so sad that I cried.
Which {x} are we going to see?
= cinema
We sat in the back row of the {x}.
The old {x} in town shows a new film every week.
= dance
My sister learned to {x} at school.
Everyone got up to {x} when the band played.
= music
Can you read {x} or do you play by ear?
We have {x} lessons at school twice a week.
= camera
{name} packed {his} {x} to take pictures of the mountains.
Is your {x} new? The photos are lovely.
= photo
Look at this old {x} of my grandparents.
Grandpa keeps a {x} of us in his wallet.
= drawing
What a beautiful {x}! Did you do it yourself?
{name} put {his} {x} on the fridge.
= pencil crayon
Draw a straight line with your {x}.
Can I borrow a {x}? I want to draw.
{name} drew a cat with a {x}.
= sing
{name} loves to {x} in the shower.
Can you {x} this song?
Mum likes to {x} while she cooks.
= choir
{name} sings in the school {x}.
The {x} sang at the Christmas concert.
Would you like to join the {x}?
= stage
The actors walked onto the {x}.
{name} was nervous on the {x}.
The band is on the {x} now.
= theatre
We saw a play at the {x}.
Is the {x} far from here?
The {x} was full on the first night.
= actor actress
The {x} forgot the lines.
Who is the {x} in this film?
{name} wants to be an {x} one day.
= clap
When the song ended, everyone began to {x}.
Please {x} for our singers!
The audience stood up to {x}.
= artist
The {x} painted the sea at sunset.
{name} wants to be an {x} when {he} grows up.
Who was the {x} who painted this?
= tickets
We bought {x} for the concert online.
How much are the {x} for the play?
Don't forget the {x}, or they won't let us in!
= loud quiet
The music in the café was very {x}.
Is the radio too {x} for you?
This song is very {x}.
= draw
Can you {x} a horse?
{name} likes to {x} animals.
Let's {x} the house with a red roof.
= scissors
Cut along the line with the {x}.
Be careful with those sharp {x}!
Children shouldn't run with {x} in their hands.
= headphones
{name} listens to music with {his} {x}.
With {x} on, you won't wake the baby.
My new {x} are small enough to fit in my pocket.
= poem
{name} wrote a {x} about the sea.
Can you read your {x} to the class?
This {x} has four lines that rhyme.
= piano
The {x} has black and white keys.
Grandma learned the {x} when she was a girl.
{name} sat down at the {x} and played.
= guitar
A {x} has six strings.
{name} played the {x} by the campfire.
I broke a string on my {x}.
= drums
{name} hit the {x} with two sticks.
The {x} were so loud the neighbours complained.
Please play the {x} more quietly!
"""

_SPORTS_RETOLD = """
= football tennis basketball
{name} watches {x} with {his} uncle.
My brother is very good at {x}.
= game match
What time does the {x} start?
Who won the {x} on Saturday?
= ball
Watch the {x} closely and keep your hands ready.
The {x} went over the fence.
= goal
That was a great {x} by our number nine!
The crowd cheered when the {x} went in.
= team
Our {x} won the cup.
{name} has played for the same {x} for years.
= swim
Can you {x}, or do you need armbands?
We're going to {x} in the lake tomorrow.
= race
Do you know who won the {x} this morning?
{name} came second in the {x}.
= football tennis
We watched {x} on TV last night.
Is {x} your favourite sport?
= ball
{name} bounced the {x} on the ground.
Kicking the {x} indoors is not allowed!
= goal goals
Did you see the {x}?
{name}'s {x} won us the match.
= racket
Hold the {x} firmly in your hand.
The strings of my old {x} are broken.
= bat
{name} hit the ball hard with the {x}.
In cricket, the player with the {x} tries to hit the ball.
= team
There are eleven players in a football {x}.
The whole {x} trained in the rain.
= match game
The {x} was cancelled because of the rain.
It was a hard {x}, but we won.
= swimming
Do you like {x} in the sea?
We're going {x} after school tomorrow.
= pool
The {x} is closed on Mondays.
Don't run next to the {x}!
= running
{name} hurt {his} knee while {x}.
My dad started {x} to lose weight.
= won
Who {x} the race on sports day?
Which team {x} the final?
= lost
We {x} the final, so we were sad.
Have you ever {x} a match?
= chess cards
Do you know how to play {x}?
We played {x} all evening because it was raining.
= bike
Wear a helmet when you ride your {x}.
My {x} has a flat tyre.
= skiing
Have you ever been {x}?
{name} broke {his} leg {x} last winter.
= medal
The {x} was made of gold and shone brightly.
The winner got a gold {x}.
= referee
Don't argue with the {x}!
The {x} stopped the game because of the rain.
= gym
{name} lifts weights at the {x}.
The {x} has lots of machines.
= helmet
A {x} protects your head if you fall.
{name} put on {his} {x} before the race.
Where is my bike {x}?
= whistle
The referee blew the {x} at the end.
When you hear the {x}, start running!
The coach has a {x} round her neck.
= coach
The {x} told us to run faster.
Our {x} is very strict.
{name}'s {x} was proud of the team.
= win lose
I hope we don't {x} tomorrow.
You can't {x} every game.
It doesn't matter if you {x}; just have fun.
= fans
The {x} cheered when the team came out.
Thousands of {x} came to watch the match.
The {x} sang all through the game.
= stadium
The {x} was full for the big match.
We took the bus to the {x}.
How many people fit in the {x}?
= trainers
{name} put on {his} {x} and went for a run.
You need good {x} for running.
My {x} are muddy after football.
= score
What's the {x}? Are we winning?
The final {x} was two all.
Who's keeping the {x} in this game?
= net
The ball hit the {x}.
In tennis you must hit the ball over the {x}.
The ball flew into the back of the {x}.
= players
A football team has eleven {x}.
The {x} shook hands after the match.
The {x} ran onto the pitch.
= kick throw
Try to {x} the ball to me.
How far can you {x} the ball?
{name} can {x} the ball further than anyone.
= train
We {x} every Tuesday and Thursday.
The team has to {x} hard before the final.
Do you {x} in the rain?
= cycling
{name} goes {x} in the hills.
Do you like {x}, or do you prefer walking?
I think {x} is good exercise.
= winner
The {x} got a cup.
Who was the {x} of the race?
Everybody clapped for the {x}.
= draw
The match ended in a {x}, one all.
Neither team won; it was a {x}.
Will it be a {x} again?
= cup trophy
Which school has the {x} now?
The captain held up the {x}.
The {x} is on a shelf in the school hall.
= skates
{name} put on {his} {x} and went onto the ice.
My {x} are too small now.
Do you have {x}? We're going to the ice rink.
"""

_NATURE_RETOLD = """
= hill mountain
We walked all the way up the {x} and back.
Does it get cold high up on the {x}?
There was snow on the {x} all winter.

= trees
Apples grow on {x} in the orchard.
Don't climb those {x}, you might fall!

= sea
The water in the {x} tastes salty.
Will you swim in the {x} tomorrow?

= beach
We relaxed on the {x} from morning till evening.
Did you find any shells on the {x}?

= flowers
Bees love {x} because of their sweet smell.
We bought {x} for Grandma because she was ill.

= river
The {x} flows down the valley to the sea.
Don't swim in the {x}, the water is too fast!

= sky
Look at all the birds in the {x}!
At sunset the {x} turns orange and pink.

= grass
Please don't walk on the {x}.
{name} sat down on the soft {x} for a rest.

= east
Does the sun rise in the {x}?
Every morning the sun appears in the {x}.

= west
In the evening the sun sets in the {x}.
Which way is {x}? That's where the sun goes down.

= tree trees
A squirrel ran up the {x}.
Squirrels build nests high up in the {x}.

= flowers
Have you watered the {x} today?
Those {x} are red, yellow and purple.

= grass
{name} cut the {x} on {day}.
Cows eat {x} in the field all day.

= sea beach
Shall we go to the {x} this summer?
We spent the whole day at the {x}.

= river lake
Ducks were swimming on the {x}.
Is the water in the {x} very cold?

= mountain hill
We climbed the {x} and had lunch at the top.
The road goes round the {x}, not over it.

= forest woods
Lots of wild animals live in the {x}.
Don't go into the {x} alone at night.

= sky
When it rains, the {x} is grey.
Why is the {x} blue in the daytime?

= moon stars
We could see the {x} because the night was clear.
We lay outside and watched the {x} for hours.

= sun
Don't look straight at the {x}, it hurts your eyes!
The {x} rises in the morning and sets in the evening.

= leaves
The {x} on the trees are green in summer.
We jumped into a big pile of {x}.

= rock stone
{name} threw a {x} into the water.
Be careful, don't trip over that {x}!

= sand
My shoes were full of {x} after the beach.
The {x} was too hot to walk on.

= island
The {x} has water all around it.
Have you ever lived on an {x}?

= camping
Did you enjoy going {x} last summer?
We love {x} because we can sleep under the stars.

= tent
It rained all night but the {x} kept us dry.
How many people can sleep in your {x}?

= field fields
The farmer grows wheat in that {x}.
Sheep were eating grass in the {x}.

= seeds
{name} planted some {x} and waited for them to grow.
If you water the {x}, they will grow into plants.
Birds like to eat {x} in winter.

= waves
The {x} crashed against the rocks.
Are the {x} too big for swimming today?
We watched the {x} roll onto the beach.

= clouds
Dark {x} mean that it might rain soon.
The plane flew high above the {x}.
There were no {x}, so the day was sunny.

= rainbow
After the rain we saw a {x} over the hills.
Red, orange, yellow, green and blue are all in a {x}.
Have you ever seen a double {x}?

= shells
The children collected {x} on the beach.
I found some pretty {x} by the sea.
Did you bring any {x} back from your holiday?

= garden
{name} grows vegetables in the {x}.
We sat in the {x} because it was warm.
Who will water the {x} while we are away?

= roots
A plant drinks water through its {x}.
Old trees have deep {x} under the ground.
Don't pull up the plant, you'll break its {x}.

= branch
The bird built its nest on a {x}.
A big {x} fell off the tree in the storm.
Hold on to the {x} so you don't fall.

= nest
The bird laid three eggs in its {x}.
We found an empty {x} in the hedge.
Don't touch the {x}, the birds will come back.

= sunrise
We got up early to watch the {x}.
The {x} over the sea was beautiful.
Did you see the {x} this morning?

= sunset
We sat on the beach and watched the {x}.
After the {x} it soon gets dark.
The sky goes red at {x}.

= tide
At low {x} you can walk out to the island.
The {x} comes in twice a day.
Be careful, the {x} is coming in fast!

= waterfall
Water crashes down the {x} into the pool below.
We could hear the {x} before we saw it.
The {x} was so loud we had to shout.

= north south east west
The wind is blowing from the {x} today.
We drove {x} for two hours.
Which way is {x} on this map?

= ice
Water turns into {x} when it gets very cold.
In winter the pond was covered in {x}.
Be careful, the {x} on the path is slippery!

= mud
After the rain the path was full of {x}.
Take off your boots, they're covered in {x}!
Pigs love rolling in the {x}.

= desert
It hardly ever rains in the {x}.
Camels can walk across the {x} for days.
The {x} is hot by day and cold at night.

= stream
A little {x} runs through the woods.
We jumped over the {x} on our walk.
The water in the {x} was clear and cold.

= bush bushes
The rabbit hid under the {x}.
Little birds were hiding in the {x}.
There are red berries on the {x}.

= planet
The earth is a {x} that goes round the sun.
Mars is called the red {x}.
Which {x} is the biggest?
"""

_TOWN_RETOLD = """
= church
People go to {x} on Sunday morning.
Which {x} do you go to on Sundays?

= bank
You can keep your money safe in a {x}.
{name} paid the money into the {x}.
Is the {x} open on Saturday?

= post
Where is the {x} office, please?
I bought some stamps at the {x} office.

= park
Let's take the dog for a walk in the {x}.
Is there a playground in the {x}?

= hospital
{name} was very ill, so {he} stayed in {x} for a week.
My sister works as a nurse at the {x}.

= police
The {x} caught the thief at last.
Did anyone call the {x} after the accident?

= restaurant cafe
Shall we meet for a coffee at the {x}?
The waiter at the {x} brought us the menu.

= town city
How many people live in your {x}?
Do you prefer a quiet {x} or a busy one?
{name} moved to a new {x} last year.

= library
Be quiet in the {x}, people are reading.
You need a card to borrow books from the {x}.

= office
Is the post {x} open on Sunday?
The post {x} is busy just before Christmas.

= park
We fed the ducks at the pond in the {x}.
Dogs must be on a lead in the {x}.

= hospital
Lots of babies are born in a {x}.
We visited Grandpa in the {x} after his operation.

= church
The old {x} has a tall tower.
Weddings often take place in a {x}.

= bridge
Cars and buses drive over the {x}.
The old {x} was closed, so we took the boat.

= bank
I need to get some money from the {x}.
The {x} closes at four, so hurry!

= police
If you see a crime, tell the {x}.
The {x} stopped the car because it was going too fast.

= shops shop
Will you get me some bread from the {x}?
Can you go to the {x} for some milk?

= cinema
Shall we go to the {x} tonight?
What's on at the {x} this week?

= pharmacy chemist
You can get medicine at the {x}.
The {x} sells plasters and cough medicine.

= lights
Cross the road when the {x} turn green.
The traffic {x} weren't working this morning.

= corner
Wait for me at the {x} by the bank.
There's a small cafe on the {x}.

= town city
London is a very big {x}.
There's a lot of traffic in the {x} centre.

= square
People like to meet in the town {x}.
The old town {x} has a fountain and some benches.

= museum
We saw old paintings and dinosaur bones at the {x}.
The {x} is free to visit on Sundays.
Did you enjoy the school trip to the {x}?

= station
The train leaves the {x} at nine.
How far is it to the bus {x}?
We waited at the {x} for our train.

= bakery
I buy fresh bread at the {x} every morning.
The {x} smells of warm cakes.
Is the {x} still open? I need some rolls.

= supermarket
{name} buys all {his} food at the {x}.
The {x} sells food, drinks and lots of other things.
Is the {x} open late tonight?

= street road
{name} lives on a quiet {x}.
Look both ways before you cross the {x}.
The {x} was full of cars.

= pavement
Walk on the {x}, not in the road.
Children shouldn't ride bikes on the {x}.
The {x} was wet and slippery.

= hotel
We stayed in a {x} near the beach.
How many nights will you stay at the {x}?
The {x} has two hundred rooms.

= market
You can buy fruit and vegetables at the {x}.
The {x} is open every Saturday morning.
Farmers sell their eggs and cheese at the {x}.

= firefighters
The {x} put out the fire quickly.
When a house is on fire, the {x} come.
The {x} drove a big red engine.

= zoo
We saw lions and elephants at the {x}.
The monkeys at the {x} were very funny.
Will you take us to the {x} on {day}?

= dentist
My tooth hurts, so I'm seeing the {x} today.
The {x} checked my teeth.
Don't be scared of the {x}!

= doctor
If you feel ill, go and see a {x}.
The {x} gave me some medicine.
{name} made an appointment with the {x}.

= neighbours
Our {x} live in the house next door.
We invited the {x} for dinner.
The {x} were very noisy last night.

= queue
We waited in a long {x} at the post office.
Please don't push in, join the {x}!
There was a {x} outside the bakery.

= traffic
There's a lot of {x} in town at five o'clock.
We were late because of the {x}.
The {x} was terrible this morning.

= bus
The number {number} {x} goes to the town centre.
I take the {x} into town.
Did you miss the {x} again?

= playground
The children played on the swings in the {x}.
There's a new {x} next to the school.
Kids love the slide at the {x}.

= theatre
We saw a play at the {x}.
The actors at the {x} were great.
Shall we go to the {x} on {day}?
"""

_ROUTINE_RETOLD = """
= days
The holiday lasted ten {x}.
A week has seven {x}.

= months
In Britain, summer lasts about three {x}.
The baby is only six {x} old.

= hours
I sleep for eight {x} every night.
How many {x} do you work each day?

= minutes
Wait a few {x}, I'm nearly ready.
The eggs take ten {x} to cook.

= year
{name} goes on holiday twice a {x}.
Next {x} I will be twelve.
A {x} has twelve months.

= week
I'll see you next {x}.
{name} went to the gym three times last {x}.

= Saturday Sunday
We don't work on {x}.
I like to stay in bed late on {x}.

= morning
Good {x}! Did you sleep well?
I always drink coffee in the {x}.

= night
Good {x}, sleep well and see you tomorrow!
{name} reads a book in bed every {x}.

= late early
Don't be {x} for school tomorrow!
Was the train {x} again?

= sleep
I couldn't {x} last night because of the noise.
Babies {x} for many hours every day.

= up
What time do you get {x} in the morning?
I woke {x} early and couldn't go back to sleep.

= clock watch
The {x} says it's half past seven.
My {x} is five minutes fast.

= Monday Tuesday Wednesday Thursday Friday
{x} is a working day.
Every {x} {name} takes the bus to work.
Last {x} we stayed at home.

= Saturday Sunday
The shops are quiet on {x} morning.
Let's meet on {x} afternoon!

= January February March April May June July August September October November December
Is your birthday in {x}?
We'll go on holiday in {x}.

= morning
I brush my teeth every {x}.
In the {x} {name} takes the dog out.

= evening night
We have dinner at seven in the {x}.
{name} likes to read in the {x}.

= week
We go shopping once a {x}.
Last {x} was very busy.

= year
Happy New {x}! Have a great party.
{name} started a new job this {x}.

= alarm
I didn't hear my {x}, so I was late.
The {x} rang, but {name} stayed in bed.

= breakfast
What did you have for {x}?
{name} had toast and tea for {x}.

= bed
The children go to {x} at eight.
I'm tired, so I'm going to {x}.

= late early
Sorry, we got here a bit {x}.
{name} will be home {x} tonight.

= weekend
What did you do at the {x}?
I'll see you after the {x}.

= today tomorrow
I can't come {x}, I'm busy.
Will you be at work {x}?

= yesterday
I was ill {x}, but I'm fine now.
Where did you go {x}?

= minutes
Can you wait five {x}?
The walk to school takes twenty {x}.

= hours
The trip took three {x} by car.
I waited for two {x}!

= clock watch
Is that {x} right? It says ten.
{name} checked the {x} and ran for the bus.

= shower
I have a {x} every morning.
Don't stay in the {x} too long!
{name} took a hot {x} after football.

= teeth
Don't forget to clean your {x} at night!
I clean my {x} twice a day.
Did you brush your {x} this morning?

= lunch
We have {x} at one o'clock.
What did you eat for {x} today?
{name} takes a sandwich to work for {x}.

= dinner
We eat {x} together in the evening.
What are we having for {x} tonight?
{name} cooked {x} for the whole family.

= dressed
{name} got {x} and went downstairs.
Hurry up and get {x}, we're late!
I get {x} after my shower.

= tired
I was so {x} that I fell asleep on the sofa.
Are you {x}? Go to bed early.
After a long day {name} always feels {x}.

= awake
The coffee keeps me {x}.
Are you still {x}? It's very late!
I lay {x} all night.

= noon midday
We eat lunch at {x}.
The sun is highest in the sky at {x}.
The shop closes at {x} on Saturdays.

= midnight
At {x} a new day begins.
{name} didn't go to bed until {x}.
Twelve o'clock at night is called {x}.

= hair
{name} brushes {his} {x} every morning.
I wash my {x} twice a week.
Did you comb your {x}?

= face
Wash your {x} and brush your teeth.
I splash cold water on my {x} to wake up.
{name} dried {his} {x} with a towel.

= towel
Dry yourself with a {x}.
{name} forgot {his} {x} at the swimming pool.
Hang the wet {x} on the hook.

= pyjamas
{name} put on {his} {x} and got into bed.
I wear {x} at night.
Are you still in your {x}? It's noon!

= dream
I had a strange {x} last night.
{name} had a bad {x} and woke up.
Do you remember your {x}?

= calendar
I wrote your birthday on the {x}.
The {x} shows every day of the month.
We have a {x} on the kitchen wall.

= snack
{name} ate an apple as a {x}.
Don't eat a {x} before dinner!
A banana is a good {x} between meals.

= holiday
We go on {x} every summer.
Where are you going on {x}?
{name} was on {x} for two weeks.
"""

_READING_RETOLD = """
= letter postcard card
Did you get my {x}?
Every Christmas {name} sends {his} aunt a {x}.

= email message
Did you read my {x}?
I'll reply to your {x} tomorrow.

= book
I'm reading a good {x} at the moment.
Have you read this {x} yet?
{name} fell asleep with a {x} in {his} hands.

= newspaper
Did you see the news in the {x} today?
My grandfather buys a {x} every day.

= story
Grandma told us a {x} about a dragon.
Do you know the {x} of Cinderella?

= dictionary
If you don't know a word, use a {x}.
A {x} tells you what words mean.

= library
{name} takes {his} books back to the {x} each week.
The {x} is closed on Sundays.

= words
How do you spell these {x}?
Write ten new {x} in your notebook.

= book novel
This {x} is too long; I'll never finish it.
What {x} are you reading at the moment?

= pages
Turn the {x} carefully, it's an old book.
How many {x} have you read?

= author writer
The {x} wrote the book in a year.
My favourite {x} is writing a new book.

= newspaper magazine
I read an article in the {x} about dogs.
Which {x} do you like reading?

= poem
We learned a {x} by heart at school.
Can you read your {x} to the class?

= letter
I'm writing a {x} to my pen friend.
The {x} came in the post this morning.

= envelope
Write the address on the {x}.
Don't forget to put a stamp on the {x}.

= pen
Can I borrow a {x}? Mine doesn't work.
Write your name in {x}, not pencil.

= notebook
I lost my {x} with all my notes in it.
{name} keeps a {x} by {his} bed.

= glasses
{name} can't read without {his} {x}.
Where did I put my {x}?

= chapter
The first {x} of the book is very exciting.
We'll read the next {x} tomorrow.

= story
Read us a bedtime {x}, please!
Do you know who wrote this {x}?

= library
Please return your books to the {x} by Friday.
You mustn't talk loudly in the {x}.

= pencil
Write in {x} so you can rub it out.
My {x} is broken, can I borrow yours?
{name} sharpened {his} {x} before the test.

= rubber eraser
Use your {x} to rub out the mistake.
Rub it out with your {x} and try again.
I lost my {x}, so I couldn't fix my mistake.

= alphabet
There are twenty-six letters in the {x}.
A is the first letter of the {x}.
Can you say the {x} backwards?

= spell
How do you {x} your name?
{name} can {x} very difficult words.
I can't {x} this long word.

= stamp
A letter won't arrive without a {x} on it.
{name} stuck a {x} on the envelope.
How much is a {x} for a postcard?

= address
Write the {x} clearly on the envelope.
Can you tell me your new {x}, please?
{name} gave me {his} {x} so I could write to {him}.

= title
What's the {x} of the book?
The {x} is on the front cover.
Every story needs a good {x}.

= cover
Don't judge a book by its {x}.
This book has a red {x}.
There's a picture of a ship on the {x}.

= shelf shelves
Put the books back on the {x}.
The books fell off the {x}.
I put the dictionary on the {x}.

= diary
{name} writes in {his} {x} every night.
I keep a {x} of everything I do.
Don't read my {x}, it's private!

= bookshop
I bought this novel at the {x}.
The {x} sells new and old books.
Let's look in the {x} for a present.

= paper
I need a piece of {x} to write on.
Write your answers on the {x}.
{name} folded the {x} and put it in an envelope.

= sentence
A {x} starts with a capital letter.
Finish the {x} with a full stop.
Can you read this {x} aloud?

= read
{name} learned to {x} when {he} was five.
I like to {x} before bed.
Do you {x} every day?

= write
{name} likes to {x} stories.
Can you {x} the date on the board?
I'll {x} to you next week.

= comics
Lots of children love reading {x}.
{name} has a big collection of {x}.
Are {x} just for kids?

= reply
I'm still waiting for a {x} to my letter.
Did {friend} send a {x}?
Thanks for your quick {x}.

= aloud
Read the poem {x} to the class.
{name} read the letter {x} to {his} grandfather.
Don't read {x} in the library!

= bookmark
Put a {x} in your book so you don't lose your page.
{name} used a ticket as a {x}.
I lost my {x}, so I don't know which page I was on.
"""

FACTS: Mapping[str, tuple[Fact, ...]] = MappingProxyType({
    "home": parse_facts(_HOME + _HOME_MORE + _HOME_RETOLD),
    "food": parse_facts(_FOOD + _FOOD_MORE + _FOOD_RETOLD),
    "school": parse_facts(_SCHOOL + _SCHOOL_MORE + _SCHOOL_RETOLD),
    "work": parse_facts(_WORK + _WORK_MORE + _WORK_RETOLD),
    "shopping": parse_facts(_SHOPPING + _SHOPPING_MORE + _SHOPPING_RETOLD),
    "travel": parse_facts(_TRAVEL + _TRAVEL_MORE + _TRAVEL_RETOLD),
    "weather": parse_facts(_WEATHER + _WEATHER_MORE + _WEATHER_RETOLD),
    "animals": parse_facts(_ANIMALS + _ANIMALS_MORE + _ANIMALS_RETOLD),
    "health": parse_facts(_BODY + _BODY_MORE + _BODY_RETOLD),
    "family": parse_facts(_FAMILY + _FAMILY_MORE + _FAMILY_RETOLD),
    "art": parse_facts(_ART + _ART_MORE + _ART_RETOLD),
    "sports": parse_facts(_SPORTS + _SPORTS_MORE + _SPORTS_RETOLD),
    "nature": parse_facts(_NATURE + _NATURE_MORE + _NATURE_RETOLD),
    "town": parse_facts(_TOWN + _TOWN_MORE + _TOWN_RETOLD),
    "routine": parse_facts(_ROUTINE + _ROUTINE_MORE + _ROUTINE_RETOLD),
    "reading": parse_facts(_READING + _READING_MORE + _READING_RETOLD),
})
"""Scene name -> its everyday facts (the sixteen scenes of ``minibert.data.everyday``)."""
