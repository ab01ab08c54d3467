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

FACTS: Mapping[str, tuple[Fact, ...]] = MappingProxyType({
    "home": parse_facts(_HOME),
    "food": parse_facts(_FOOD),
    "school": parse_facts(_SCHOOL),
    "work": parse_facts(_WORK),
    "shopping": parse_facts(_SHOPPING),
    "travel": parse_facts(_TRAVEL),
    "weather": parse_facts(_WEATHER),
    "animals": parse_facts(_ANIMALS),
    "health": parse_facts(_BODY),
    "family": parse_facts(_FAMILY),
    "art": parse_facts(_ART),
    "sports": parse_facts(_SPORTS),
    "nature": parse_facts(_NATURE),
    "town": parse_facts(_TOWN),
    "routine": parse_facts(_ROUTINE),
    "reading": parse_facts(_READING),
})
"""Scene name -> its everyday facts (the sixteen scenes of ``minibert.data.everyday``)."""
