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
Would you like some ice {x}?
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
Our {x} gave us too much homework.
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
{name} saved {his} {x} to buy a bike.
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
If you are ill, you should see a {x}.
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
I sent the letter at the {x} office.
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
Look up the word in the {x}.
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
Can I borrow your {x}? Mine is broken.
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
{name} earns good {x} at the bank.
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
{name} saved {his} {x} to buy a bike.
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
My aunt's children are my {x}.
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
I posted the letter at the post {x}.
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

FACTS: Mapping[str, tuple[Fact, ...]] = MappingProxyType({
    "home": parse_facts(_HOME + _HOME_MORE),
    "food": parse_facts(_FOOD + _FOOD_MORE),
    "school": parse_facts(_SCHOOL + _SCHOOL_MORE),
    "work": parse_facts(_WORK + _WORK_MORE),
    "shopping": parse_facts(_SHOPPING + _SHOPPING_MORE),
    "travel": parse_facts(_TRAVEL + _TRAVEL_MORE),
    "weather": parse_facts(_WEATHER + _WEATHER_MORE),
    "animals": parse_facts(_ANIMALS + _ANIMALS_MORE),
    "health": parse_facts(_BODY + _BODY_MORE),
    "family": parse_facts(_FAMILY + _FAMILY_MORE),
    "art": parse_facts(_ART + _ART_MORE),
    "sports": parse_facts(_SPORTS + _SPORTS_MORE),
    "nature": parse_facts(_NATURE + _NATURE_MORE),
    "town": parse_facts(_TOWN + _TOWN_MORE),
    "routine": parse_facts(_ROUTINE + _ROUTINE_MORE),
    "reading": parse_facts(_READING + _READING_MORE),
})
"""Scene name -> its everyday facts (the sixteen scenes of ``minibert.data.everyday``)."""
