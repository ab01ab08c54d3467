"""Room sentences: everyday fill-mask sentences a class suggests, held out of every corpus.

A lecture's live moment is a room calling out a sentence. These are such sentences, written
before the everyday scenes of the toy world were, as a room would say them, each with the
words that a listener would accept for its ``[MASK]``. They measure the reference model
(``benchmarks/room_sentences.py``) and are never trained on or tuned on: the corpus
generator refuses to write any of them with any word in the mask's place
(``is_room_sentence``), and a test reads the whole training corpus to check it.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

__all__ = ["ROOM_SENTENCES", "ROOM_SENTENCES_B", "ROOM_SENTENCES_C",
           "ROOM_SENTENCES_D", "ROOM_SENTENCES_E", "ROOM_SETS", "RoomSentence",
           "is_room_sentence", "room_sentence_pattern", "word_runs"]


@dataclass(frozen=True)
class RoomSentence:
    """One room sentence: the text with one ``[MASK]``, and the answers that make sense.

    ``sensible`` holds lower-case words; a model's answer counts when its top 3 holds one.
    """

    text: str
    sensible: tuple[str, ...]


def _room(text: str, *sensible: str) -> RoomSentence:
    return RoomSentence(text, tuple(sensible))


ROOM_SENTENCES: tuple[RoomSentence, ...] = (
    _room("I drank a cup of hot [MASK] this morning.", "tea", "coffee", "chocolate", "milk",
          "water", "soup"),
    _room("The [MASK] barked at the postman.", "dog", "dogs", "puppy"),
    _room("She paid for the tickets with her credit [MASK].", "card"),
    _room("It is raining, so take an [MASK].", "umbrella", "overcoat"),
    _room("My brother is two years [MASK] than me.", "older", "younger"),
    _room("We eat breakfast in the [MASK].", "morning", "kitchen", "garden"),
    _room("The children played football in the [MASK].", "park", "garden", "street", "yard",
          "field", "playground", "rain", "snow", "school", "afternoon", "morning", "evening"),
    _room("I brush my [MASK] every night.", "teeth", "hair"),
    _room("The teacher wrote the answer on the [MASK].", "board", "blackboard", "whiteboard",
          "paper", "page", "wall"),
    _room("Can you pass me the [MASK], please?", "salt", "bread", "water", "butter", "book",
          "pen", "ball", "milk", "sugar", "pepper", "cheese", "menu", "plate", "cup", "remote"),
    _room("The cat is sleeping on the [MASK].", "bed", "sofa", "chair", "floor", "table", "mat",
          "roof", "couch", "bench", "grass", "window", "carpet"),
    _room("In winter it is very [MASK].", "cold", "dark", "snowy", "wet", "windy", "icy"),
    _room("We took the [MASK] to the airport.", "bus", "train", "taxi", "car", "road"),
    _room("My mother cooked [MASK] for dinner.", "chicken", "soup", "rice", "pasta", "fish",
          "meat", "potatoes", "eggs", "vegetables", "beans", "pizza", "curry", "stew", "lamb",
          "beef", "something"),
    _room("I am going to the [MASK] to buy some bread.", "shop", "bakery", "market", "store",
          "supermarket", "town", "city", "village", "baker"),
    _room("The sun is shining and the sky is [MASK].", "blue", "clear", "bright"),
    _room("He broke his [MASK] playing football.", "leg", "arm", "nose", "foot", "ankle",
          "wrist", "finger", "hand", "tooth", "knee", "toe", "back", "neck"),
    _room("I read a [MASK] before I go to sleep.", "book", "story", "page", "chapter",
          "magazine", "newspaper", "poem", "letter", "novel"),
    _room("The farmer milked the [MASK].", "cow", "cows", "goat", "goats", "sheep"),
    _room("We went to the [MASK] to see a film.", "cinema", "theatre", "town", "city",
          "movies"),
    _room("She plays the [MASK] in a band.", "guitar", "piano", "drums", "violin", "trumpet",
          "flute", "bass", "saxophone", "drum", "keyboard", "cello"),
    _room("The doctor told me to stay in [MASK] for two days.", "bed", "hospital", "home"),
    _room("My [MASK] is ringing, can you answer it?", "phone", "mobile", "telephone"),
    _room("The train was late, so we [MASK] the meeting.", "missed"),
    _room("Don't forget to lock the [MASK] when you leave.", "door", "doors", "car", "gate",
          "house", "window", "office", "shop", "room"),
    _room("The students did not finish their [MASK].", "homework", "work", "exams", "exam",
          "lunch", "essays", "essay", "test", "tests", "project", "projects", "dinner", "food",
          "meal", "assignments", "books", "lessons", "studies", "breakfast"),
    _room("I feel sick because I ate too much [MASK].", "food", "cake", "chocolate", "candy",
          "sugar", "pizza", "bread", "meat", "fruit", "cheese", "dessert", "pie", "rice"),
    _room("Birds build their [MASK] in the trees.", "nests", "nest", "homes"),
    _room("We climbed to the top of the [MASK].", "hill", "mountain", "tower", "stairs", "tree",
          "building", "hills", "mountains", "cliff", "ladder", "steps", "rock"),
    _room("How much does this [MASK] cost?", "shirt", "book", "bag", "ticket", "car", "one",
          "dress", "coat", "thing", "hat", "phone", "house", "bike", "cake", "meal", "jacket",
          "watch", "room", "box", "bottle", "trip", "table", "chair", "computer"),
    _room("The baby is crying because she is [MASK].", "hungry", "tired", "sad", "sick", "wet",
          "cold", "scared", "ill", "afraid", "alone", "hurt", "upset", "thirsty"),
    _room("Our team won the [MASK] last Saturday.", "game", "match", "cup", "final", "race",
          "league", "championship", "tournament", "title", "trophy"),
    _room("My sister lives in a small [MASK] near the sea.", "house", "town", "village", "flat",
          "cottage", "apartment", "city", "home", "room"),
    _room("It is my birthday, and I am ten years [MASK] today.", "old"),
    _room("There are 12 months in a [MASK].", "year"),
    _room("There are 7 [MASK] in a week.", "days"),
    _room("He washed his hands with soap and [MASK].", "water"),
    _room("Please [MASK] the window, it is cold.", "close", "shut"),
    _room("We are going on [MASK] to Spain next summer.", "holiday", "vacation", "tour",
          "holidays"),
    _room("I put the milk back in the [MASK].", "fridge", "refrigerator", "kitchen", "bottle",
          "cupboard", "jug"),
    _room("The library is full of [MASK].", "books", "students", "people", "children",
          "readers"),
    _room("The painter painted a [MASK] of the sea.", "picture", "painting", "view", "scene",
          "landscape", "portrait"),
    _room("Why are you [MASK] at me?", "looking", "laughing", "shouting", "staring", "smiling",
          "yelling", "angry", "waving", "pointing", "mad", "upset", "cross"),
    _room("I didn't sleep well, so I am very [MASK] today.", "tired", "sleepy"),
    _room("The waiter brought us the [MASK].", "menu", "bill", "food", "drinks", "check",
          "soup", "coffee", "wine", "water", "bread", "order", "meal", "plates", "dessert",
          "tea", "cake"),
    _room("Look! It is [MASK] outside!", "snowing", "raining", "sunny", "dark", "cold", "windy",
          "beautiful", "hot", "warm", "lovely", "bright", "freezing", "light", "wet"),
    _room("We need eggs, flour and [MASK] to bake a cake.", "sugar", "butter", "milk", "water"),
    _room("She wrote a [MASK] to her grandmother.", "letter", "card", "note", "poem",
          "postcard", "message", "email", "story"),
    _room("The bus stops in front of the [MASK].", "school", "station", "house", "church",
          "library", "shop", "bank", "hotel", "hospital", "museum", "park", "office", "store",
          "building", "cinema", "gate", "theatre", "market", "town", "post"),
    _room("My favourite colour is [MASK].", "red", "blue", "green", "yellow", "orange",
          "purple", "pink", "black", "white", "brown", "grey", "gray"),
    _room("The bank is closed on [MASK].", "sunday", "sundays", "saturday", "saturdays",
          "monday", "mondays", "holidays", "weekends", "friday", "fridays", "tuesday",
          "wednesday", "thursday"),
)
"""The room set: 51 everyday sentences, each with one ``[MASK]`` and its sensible answers."""


ROOM_SENTENCES_B: tuple[RoomSentence, ...] = (
    _room("Can I have a glass of [MASK], please?", "water", "milk", "juice", "wine",
          "lemonade", "beer"),
    _room("My dad drives a red [MASK].", "car", "truck", "van", "bus", "tractor", "lorry"),
    _room("The cat chased the [MASK] around the garden.", "mouse", "mice", "dog", "bird",
          "birds", "ball", "rabbit", "cat", "dogs"),
    _room("We go to school by [MASK] every day.", "bus", "car", "bike", "train", "foot",
          "bicycle", "taxi", "tram"),
    _room("I wash my hands before I [MASK].", "eat", "cook", "leave", "sleep"),
    _room("It was so cold that the lake turned to [MASK].", "ice", "snow", "stone"),
    _room("She put on her coat because it was [MASK].", "cold", "raining", "snowing", "windy",
          "freezing", "wet", "late", "dark"),
    _room("The shop opens at nine o'clock in the [MASK].", "morning"),
    _room("He is reading a [MASK] about dinosaurs.", "book", "story", "magazine", "novel",
          "comic", "page", "paper", "report", "article"),
    _room("Please turn off the [MASK] when you leave the room.", "light", "lights",
          "television", "tv", "radio", "heater", "computer", "lamp", "music", "oven", "fire"),
    _room("My grandmother is eighty years [MASK].", "old"),
    _room("We had pizza and ice [MASK] at the party.", "cream", "tea", "coffee"),
    _room("The baby is sleeping in her [MASK].", "bed", "room", "cot", "pram", "cradle",
          "bedroom", "arms"),
    _room("I have a bad headache, so I need to see a [MASK].", "doctor", "nurse", "dentist"),
    _room("The match starts in ten [MASK].", "minutes", "seconds", "hours", "days"),
    _room("He opened the [MASK] and got out a bottle of milk.", "fridge", "door", "bag", "box",
          "cupboard", "window"),
    _room("We planted flowers in the [MASK].", "garden", "park", "field", "ground", "pot",
          "pots", "yard", "spring", "soil"),
    _room("The students are sitting in the [MASK].", "classroom", "class", "room", "hall",
          "library", "garden", "sun", "park", "canteen"),
    _room("Do you want to play [MASK] with us?", "football", "cards", "tennis", "games",
          "chess", "outside", "basketball", "music", "golf", "cricket", "ball"),
    _room("It's late, I have to go [MASK] now.", "home", "out", "back", "away", "bed",
          "inside", "upstairs", "too"),
    _room("The river flows into the [MASK].", "sea", "ocean", "lake", "valley", "town", "city"),
    _room("I forgot my [MASK] at home.", "keys", "phone", "bag", "book", "homework", "wallet",
          "coat", "umbrella", "glasses", "lunch", "money", "ticket", "books", "key"),
    _room("My sister is a [MASK] at the hospital.", "nurse", "doctor", "cook", "cleaner",
          "patient", "worker", "teacher", "volunteer", "surgeon"),
    _room("We watched a funny [MASK] on television.", "film", "show", "movie", "programme",
          "program", "video", "game", "cartoon", "story"),
    _room("The plane landed at the [MASK] on time.", "airport", "station"),
    _room("There is a big tree in front of our [MASK].", "house", "school", "home", "door",
          "window", "garden", "flat", "building", "church", "office", "shop"),
    _room("I usually have [MASK] for breakfast.", "toast", "eggs", "bread", "cereal",
          "porridge", "coffee", "tea", "fruit", "pancakes", "milk"),
    _room("Can you help me carry these [MASK]?", "bags", "boxes", "books", "chairs", "things",
          "plates"),
    _room("The sun rises in the [MASK].", "east", "morning"),
    _room("He missed the bus, so he was [MASK] for work.", "late"),
    _room("My phone battery is [MASK].", "dead", "empty", "flat", "low", "full", "charged",
          "broken", "gone"),
    _room("She is learning to play the [MASK].", "piano", "guitar", "violin", "drums",
          "flute", "trumpet", "game", "cello"),
    _room("The shoes were too [MASK], so I bought a bigger pair.", "small", "tight", "short",
          "little"),
    _room("We walked along the [MASK] and looked at the sea.", "beach", "shore", "coast",
          "river", "road", "path", "cliff", "cliffs", "street", "sand", "harbour"),
    _room("Tomorrow will be sunny and [MASK].", "warm", "hot", "dry", "bright", "clear",
          "cold", "windy", "nice", "fine", "beautiful", "lovely", "cool"),
    _room("The children are [MASK] in the park.", "playing", "running", "swimming", "walking",
          "singing", "dancing", "eating", "sitting", "laughing", "reading", "skating",
          "outside", "together", "happy"),
    _room("Our dog loves to chase the [MASK].", "ball", "cat", "cats", "birds", "ducks",
          "sheep", "car", "cars", "squirrels", "rabbits", "stick", "postman", "bus", "bike"),
    _room("Wear a hat, the sun is very [MASK] today.", "hot", "strong", "bright", "warm"),
    _room("He fell off his [MASK] and hurt his knee.", "bike", "bicycle", "horse", "chair",
          "bed", "skateboard", "ladder", "scooter", "board", "seat"),
    _room("I need a [MASK] to write this down.", "pen", "pencil", "paper", "notebook", "book",
          "computer", "minute", "piece", "note"),
    _room("The teacher asked us to open our [MASK].", "books", "bags", "eyes", "notebooks",
          "mouths", "laptops", "windows", "doors"),
    _room("We sat by the fire to keep [MASK].", "warm", "dry", "safe"),
    _room("My mother is [MASK] dinner in the kitchen.", "cooking", "making", "eating",
          "preparing", "having"),
    _room("How many [MASK] are there in your family?", "people", "children", "kids",
          "brothers", "sisters", "members", "persons", "cousins"),
)
"""The second room set: 44 more everyday sentences, written after the first reference trained
on the everyday world had been scored on ``ROOM_SENTENCES`` and before the world was grown
again, so that it measures what that growth did for sentences nobody had looked at. Held out
of every corpus like the first."""

ROOM_SENTENCES_C: tuple[RoomSentence, ...] = (
    _room("I like to drink [MASK] with my breakfast.", "coffee", "tea", "milk", "juice",
          "water", "chocolate"),
    _room("The kids are watching [MASK] in the living room.", "television", "tv", "cartoons",
          "films", "movies", "football", "videos", "something"),
    _room("Put your dirty clothes in the washing [MASK].", "machine", "basket"),
    _room("We bought a new [MASK] for the kitchen.", "table", "fridge", "oven", "cooker",
          "clock", "chair", "chairs", "lamp", "kettle", "sink", "cupboard", "microwave",
          "knife", "toaster"),
    _room("My uncle works on a [MASK] with lots of cows.", "farm"),
    _room("You should wear a [MASK] when you ride a bike.", "helmet", "hat", "coat", "jacket"),
    _room("The ice cream melted in the hot [MASK].", "sun", "weather", "car", "summer",
          "kitchen", "room", "day"),
    _room("Turn left at the end of the [MASK].", "road", "street", "corridor", "path", "lane",
          "hall", "bridge"),
    _room("I'm sorry I'm late, I missed the [MASK].", "bus", "train", "tram", "boat", "plane",
          "flight", "ferry"),
    _room("Christmas is in [MASK].", "december", "winter"),
    _room("She is wearing a beautiful red [MASK].", "dress", "coat", "hat", "skirt", "scarf",
          "shirt", "jumper", "jacket", "top", "blouse", "sweater"),
    _room("My little brother is afraid of the [MASK].", "dark", "dog", "dogs", "spiders",
          "water", "doctor", "dentist", "sea", "night", "snake", "snakes", "monster",
          "monsters", "cat", "ghost", "ghosts", "teacher"),
    _room("I haven't seen you for a long [MASK]!", "time", "while"),
    _room("Let's meet at the [MASK] after school.", "park", "library", "cafe", "gate",
          "station", "corner", "shop", "cinema", "beach", "bus", "pool", "house", "school"),
    _room("He put sugar in his [MASK].", "tea", "coffee", "milk", "cereal", "porridge", "cup",
          "drink", "mouth"),
    _room("We need to buy some [MASK] for the party.", "food", "drinks", "cake", "balloons",
          "snacks", "juice", "crisps", "pizza", "music", "presents", "chairs", "cups",
          "plates", "sweets", "wine", "beer", "candles"),
    _room("My best friend lives next [MASK].", "door"),
    _room("The glass fell on the floor and [MASK].", "broke", "smashed", "shattered",
          "cracked", "broken"),
    _room("You can't park your car [MASK].", "here", "there", "outside"),
    _room("The children were [MASK] loudly in the playground.", "playing", "shouting",
          "laughing", "singing", "screaming", "talking", "running", "crying", "yelling"),
    _room("My hands are cold because I forgot my [MASK].", "gloves", "mittens", "coat",
          "jacket", "scarf"),
    _room("The postman brought a [MASK] for you.", "letter", "parcel", "package", "card",
          "postcard", "present", "box", "message", "note", "gift"),
    _room("We had a picnic by the [MASK].", "river", "lake", "sea", "beach", "tree", "trees",
          "road", "pool", "pond", "water", "fire", "house", "car", "park", "stream", "canal"),
    _room("The cake is in the [MASK].", "oven", "fridge", "kitchen", "box", "tin", "cupboard",
          "bag"),
    _room("Take off your [MASK] before you come in.", "shoes", "boots", "coat", "hat",
          "jacket", "coats"),
    _room("I can't hear you, the music is too [MASK].", "loud", "noisy"),
    _room("Our cat has four white [MASK].", "paws", "feet", "legs", "kittens", "socks",
          "spots", "ears"),
    _room("He cleaned his glasses and put them back [MASK].", "on", "again", "away", "down"),
    _room("Every morning I walk my [MASK] in the park.", "dog", "dogs", "sister", "brother",
          "puppy", "son", "daughter", "kids", "children"),
    _room("She cut the apple with a [MASK].", "knife", "spoon", "fork", "sword"),
    _room("The test was very [MASK], so everybody passed.", "easy", "short", "simple"),
    _room("I'm going to the shop. Do you need [MASK]?", "anything", "something", "milk",
          "bread", "help", "money", "food"),
    _room("The train was full, so we had to [MASK].", "stand", "wait", "walk"),
    _room("I wrote my name at the top of the [MASK].", "page", "paper", "letter", "sheet",
          "form", "list", "card", "board", "test", "exam"),
    _room("He drank too much coffee and couldn't [MASK].", "sleep", "stop", "work", "think",
          "eat"),
    _room("My grandparents live in a small village in the [MASK].", "country",
          "countryside", "mountains", "north", "south", "east", "west", "hills", "valley",
          "forest"),
    _room("Don't touch the oven, it's very [MASK].", "hot", "dangerous", "old", "dirty",
          "warm"),
    _room("We waited for the bus in the [MASK].", "rain", "snow", "cold", "street",
          "station", "sun", "dark", "wind", "morning", "evening", "queue", "shelter", "road"),
    _room("The film was so boring that I fell [MASK].", "asleep"),
    _room("She took a photo of the [MASK].", "sea", "sunset", "view", "beach", "mountains",
          "mountain", "house", "family", "children", "city", "dog", "cat", "baby", "flowers",
          "garden", "bridge", "tree", "sky", "moon", "lake", "church", "castle", "river",
          "town", "group", "class", "team", "cake", "car", "birds", "bird", "kids"),
    _room("The shop sells fresh fruit and [MASK].", "vegetables", "bread", "flowers", "milk",
          "meat", "fish", "eggs", "cheese", "juice", "veg", "nuts"),
    _room("I have to be home before [MASK].", "dark", "dinner", "midnight", "ten", "eight",
          "nine", "seven", "six", "eleven", "lunch", "bedtime", "tea", "night", "sunset",
          "noon"),
    _room("Could you open the [MASK]? It's hot in here.", "window", "windows", "door"),
)
"""The third room set: 43 everyday sentences written after the facts of
``minibert.data.facts`` and before the corpus that holds them was generated or any model
trained on it; the world was not changed after. Of the three sets, this one alone saw nothing
of the world it measures. Held out of every corpus like the others."""


ROOM_SENTENCES_D: tuple[RoomSentence, ...] = (
    # home
    _room("Can you close the [MASK]? It's cold in here.", "window", "door", "windows", "doors",
          "curtains", "fridge", "freezer", "gate"),
    _room("I left my keys on the kitchen [MASK].", "table", "counter", "worktop", "shelf",
          "floor", "side", "windowsill", "bench", "sideboard"),
    _room("We're painting the [MASK] blue this weekend.", "kitchen", "bedroom", "house", "walls",
          "wall", "door", "fence", "room", "bathroom", "shed", "hall", "ceiling", "gate",
          "boat", "bedrooms", "doors"),
    # food and drink
    _room("Do you take [MASK] in your tea?", "milk", "sugar", "lemon", "honey", "cream",
          "sweetener"),
    _room("Pass me a [MASK] so I can slice this loaf.", "knife"),
    _room("I like my [MASK] with butter and jam.", "toast", "bread", "scones", "pancakes",
          "croissants", "crumpets", "muffins", "rolls", "bagels", "waffles"),
    # school
    _room("Could you copy the sentences from the [MASK] into your exercise books?", "board",
          "blackboard", "whiteboard", "chalkboard", "screen", "textbook", "book", "sheet",
          "page", "worksheet", "handout", "slide", "wall"),
    _room("Did you finish your maths [MASK] last night?", "homework", "assignment", "test",
          "project", "exam", "revision", "worksheet", "essay", "exercises", "problems"),
    _room("Our class is going on a [MASK] to the museum tomorrow.", "trip", "visit", "tour",
          "outing", "journey", "walk", "bus"),
    # work
    _room("My mum works as a [MASK] at the hospital.", "nurse", "doctor", "cleaner", "surgeon",
          "porter", "receptionist", "cook", "volunteer", "midwife", "pharmacist", "manager",
          "secretary", "chef", "physiotherapist", "radiographer"),
    _room("I have an important [MASK] with my boss at ten.", "meeting", "interview", "call",
          "appointment", "talk", "presentation", "chat", "conversation", "lunch", "review"),
    _room("After 30 years at the factory, he finally [MASK] last spring.", "retired",
          "resigned", "left", "quit"),
    # shopping and money
    _room("How much do these [MASK] cost?", "shoes", "apples", "tickets", "jeans", "books",
          "boots", "trousers", "glasses", "socks", "flowers", "ones", "oranges", "things",
          "sweets", "shirts"),
    _room("We didn't have enough [MASK] to buy the tickets.", "money", "cash", "time"),
    _room("The shop isn't [MASK] on Sundays, so let's go on Saturday.", "open"),
    # travel and transport
    _room("We're flying to Spain, so we need to get to the [MASK] early.", "airport",
          "station"),
    _room("The train was [MASK] because of the snow.", "late", "delayed", "cancelled", "slow",
          "stopped", "stuck", "cold", "empty", "full"),
    _room("Don't forget your [MASK] when we cross the border!", "passport", "passports",
          "papers", "ticket", "tickets", "documents", "id", "visa"),
    # weather and seasons
    _room("It's so [MASK] today, let's go to the beach!", "hot", "sunny", "warm", "nice",
          "lovely", "beautiful", "bright"),
    _room("In [MASK], the leaves on our street go orange and brown.", "autumn", "fall",
          "october", "september", "november"),
    _room("The forecast says it will [MASK] all day tomorrow.", "rain", "snow", "pour",
          "drizzle", "shine", "storm", "hail"),
    # animals and the farm
    _room("Every day at dawn, our neighbour's [MASK] need milking.", "cows", "goats", "sheep",
          "cattle"),
    _room("The hens laid six [MASK] this morning.", "eggs"),
    _room("The cat is sleeping under the [MASK].", "table", "bed", "tree", "chair", "sofa",
          "couch", "car", "stairs", "blanket", "sun", "bush", "desk", "bushes", "trees"),
    # body and health
    _room("I've got a terrible [MASK], so I'm staying in bed.", "cold", "headache", "flu",
          "cough", "fever", "temperature", "stomachache", "toothache", "backache",
          "migraine", "infection"),
    _room("Have you brushed your [MASK] yet? It's bedtime.", "teeth", "hair"),
    _room("She broke her [MASK] when she fell off the ladder.", "arm", "leg", "wrist", "ankle",
          "nose", "hip", "back", "foot", "finger", "neck", "hand", "toe", "elbow", "ribs",
          "jaw", "shoulder", "knee", "collarbone"),
    # family and friends
    _room("My grandmother is my mother's [MASK].", "mother", "mum", "mom"),
    _room("We invited all our [MASK] to the birthday party.", "friends", "family",
          "neighbours", "neighbors", "cousins", "relatives", "classmates", "colleagues",
          "children", "kids", "relations"),
    _room("I'm meeting my best [MASK] for lunch on Friday.", "friend", "mate", "buddy", "pal"),
    # music and art
    _room("She plays the [MASK] in the school orchestra.", "violin", "cello", "flute", "piano",
          "trumpet", "clarinet", "drums", "viola", "oboe", "harp", "trombone", "saxophone",
          "bassoon", "horn", "tuba", "triangle"),
    _room("He painted a beautiful [MASK] of the sea.", "picture", "painting", "portrait",
          "view", "scene", "landscape", "watercolour", "image", "sketch", "seascape"),
    _room("Can you [MASK] us a song?", "sing", "play", "write", "teach", "find", "choose",
          "pick", "record"),
    # sports and games
    _room("Our team [MASK] the match 3-1 on Saturday.", "won", "lost", "drew"),
    _room("Let's play a game of [MASK] after dinner.", "chess", "cards", "football", "tennis",
          "scrabble", "monopoly", "cricket", "pool", "darts", "snooker", "bingo", "checkers",
          "draughts", "golf", "charades", "dominoes", "poker", "rummy"),
    _room("The goalkeeper caught the [MASK] with both hands.", "ball", "football"),
    # nature and the outdoors
    _room("It took us three hours to climb that [MASK]!", "hill", "mountain", "tree", "tower",
          "cliff", "ladder", "rock", "volcano", "peak", "wall", "slope", "path", "ridge"),
    _room("There are lots of fish in this [MASK].", "river", "lake", "pond", "sea", "stream",
          "tank", "ocean", "water", "bay", "canal", "aquarium", "area"),
    _room("The birds are [MASK] in the trees.", "singing", "sitting", "nesting", "chirping",
          "sleeping", "hiding", "tweeting", "perched", "resting", "playing", "calling"),
    # the town
    _room("Excuse me, is there a [MASK] near here? I need to buy some bread.", "bakery",
          "shop", "supermarket", "baker", "bakers", "store", "market", "grocer", "grocery"),
    _room("They're building a new [MASK] in the middle of town.", "school", "library",
          "hospital", "park", "shop", "supermarket", "hotel", "cinema", "museum", "road",
          "bridge", "station", "theatre", "mall", "church", "stadium", "office", "gym",
          "pool", "square", "centre", "fountain", "tower"),
    _room("Turn left at the traffic [MASK].", "lights", "light"),
    # time and daily routine
    _room("What [MASK] is it? We're going to be late!", "time", "day"),
    _room("Every night I have a warm [MASK] before sleeping.", "bath", "shower", "drink",
          "milk", "tea", "cocoa", "chocolate"),
    _room("A [MASK] has seven days.", "week"),
    # reading and writing
    _room("I'm reading a really good [MASK] about pirates.", "book", "novel", "story",
          "comic", "article", "magazine", "poem", "blog"),
    _room("Please write your [MASK] at the top of the page.", "name", "names", "date",
          "address", "title", "number"),
    _room("He wrote a long [MASK] to his grandmother.", "letter", "email", "poem", "note",
          "message", "card", "story", "postcard"),
)
"""The fourth room set: 48 everyday sentences, three for each of the sixteen everyday scenes,
written on 2026-11-28 by an author who had not read the toy world's scenes, facts or word
lists, before any model was run on it. Held out of every corpus like the others."""


ROOM_SENTENCES_E: tuple[RoomSentence, ...] = (
    # home
    _room("The dishes are dirty, so I'll put them in the [MASK].", "sink", "dishwasher",
          "water", "bowl"),
    _room("Who left the [MASK] running in the bathroom?", "tap", "taps", "water", "shower",
          "bath", "fan", "faucet"),
    _room("Our house has three [MASK] and a small garden.", "bedrooms", "rooms", "floors",
          "bathrooms", "storeys", "stories", "windows", "doors", "toilets", "chimneys",
          "levels"),
    # food and drink
    _room("For lunch I had a cheese [MASK] and an apple.", "sandwich", "sandwiches", "roll",
          "toastie", "salad", "omelette", "pie", "pizza", "burger", "bagel", "scone",
          "baguette", "quiche", "toast", "cake"),
    _room("Would you like some more [MASK]? There's plenty left in the pot.", "soup", "tea",
          "coffee", "rice", "stew", "pasta", "curry", "potatoes", "beans", "porridge", "food",
          "chilli", "chili", "sauce", "gravy"),
    _room("Bananas are yellow, but strawberries are [MASK].", "red"),
    # school
    _room("The bell rang and the pupils ran out to the [MASK].", "playground", "yard",
          "field", "gate", "gates", "park", "bus", "buses", "street", "garden", "road", "car",
          "cars", "hall", "canteen"),
    _room("I got every question right on the spelling [MASK]!", "test", "tests", "quiz",
          "exam", "bee", "sheet", "paper", "worksheet", "homework"),
    _room("Our teacher gave us too much [MASK] over the holidays.", "homework", "work",
          "reading", "revision", "coursework"),
    # work
    _room("She starts her new [MASK] at the bank on Monday.", "job", "role", "position",
          "post", "work", "career", "training", "internship", "placement", "shift"),
    _room("Dad isn't home yet because he is still at [MASK].", "work", "school", "lunch",
          "university", "college", "training", "practice", "sea", "church"),
    _room("The office was closed, so everybody worked from [MASK] today.", "home"),
    # shopping and money
    _room("We are saving [MASK] to buy a new car.", "money", "up", "hard", "cash"),
    _room("These jeans were half [MASK] in the sale.", "price", "off", "priced"),
    _room("The cashier gave me my [MASK] and a receipt.", "change", "money", "card", "bag",
          "bags", "shopping", "goods", "groceries", "food", "coffee", "ticket", "wallet",
          "purchase", "purchases", "things"),
    # travel and transport
    _room("Our flight was cancelled, so we spent the night at the [MASK].", "airport",
          "hotel", "station", "terminal", "gate", "inn", "motel"),
    _room("You can't get on the train without a [MASK].", "ticket", "tickets", "pass", "card",
          "railcard", "travelcard", "passport", "reservation"),
    _room("He fixed the flat [MASK] on his bike before riding to work.", "tyre", "tire",
          "tyres", "tires", "wheel", "tube"),
    # weather and seasons
    _room("There was so much [MASK] that school was closed.", "snow", "rain", "ice", "wind",
          "fog", "flooding", "water", "flood", "illness", "sickness", "noise"),
    _room("We saw a rainbow after the [MASK] stopped.", "rain", "storm", "shower",
          "downpour", "rainfall", "drizzle", "thunder", "hail"),
    _room("The days get longer in [MASK].", "spring", "summer", "june", "may", "april",
          "march"),
    # animals and the farm
    _room("The farmer keeps his [MASK] in the barn at night.", "cows", "cow", "horses",
          "horse", "sheep", "animals", "pigs", "tractor", "hens", "chickens", "goats",
          "cattle", "hay", "tools", "calves", "lambs", "machinery", "equipment", "dog", "dogs"),
    _room("A young sheep is called a [MASK].", "lamb"),
    _room("Our dog wags its [MASK] when it's happy.", "tail"),
    # body and health
    _room("I've been coughing all week and my [MASK] hurts.", "throat", "chest", "head",
          "back", "stomach", "ribs", "neck", "side", "voice", "body", "lungs", "belly",
          "tummy"),
    _room("You should see a [MASK] about that toothache.", "dentist", "doctor"),
    _room("She cut her [MASK] while chopping the onions.", "finger", "fingers", "hand",
          "thumb", "arm", "skin", "nail"),
    # family and friends
    _room("My aunt's children are my [MASK].", "cousins", "cousin", "relatives", "family",
          "relations"),
    _room("We're having a big family [MASK] at Grandma's on Sunday.", "dinner", "lunch",
          "party", "meal", "gathering", "reunion", "picnic", "barbecue", "celebration", "day",
          "roast", "feast", "meeting", "breakfast"),
    _room("He and I have been [MASK] since primary school.", "friends", "together", "mates",
          "inseparable", "classmates", "neighbours", "neighbors", "partners", "buddies",
          "pals", "rivals"),
    # music and art
    _room("Turn the [MASK] down, I'm trying to study.", "music", "radio", "volume", "tv",
          "television", "sound", "telly", "noise", "stereo", "heating", "heat", "lights",
          "light"),
    _room("The band finished the concert with their most famous [MASK].", "song",
          "songs", "hit", "hits", "tune", "tunes", "track", "number", "piece", "single",
          "album"),
    _room("She drew a picture of her cat with coloured [MASK].", "pencils", "pencil", "pens",
          "crayons", "chalk", "chalks", "markers", "ink", "inks", "paper", "pastels", "felts"),
    # sports and games
    _room("He can [MASK] faster than anyone in our class.", "run", "swim", "read", "type",
          "write", "count", "cycle", "climb", "draw", "eat", "talk", "skate", "jump", "ski",
          "sprint", "think", "spell", "dance"),
    _room("Whose turn is it to roll the [MASK]?", "dice", "die", "ball"),
    _room("The swimming [MASK] is closed for cleaning today.", "pool", "baths", "centre",
          "club", "lesson", "lessons", "area", "hall"),
    # nature and the outdoors
    _room("We camped in a [MASK] beside the lake.", "tent", "field", "forest", "wood",
          "woods", "caravan", "meadow", "clearing", "cabin", "hut", "valley", "park", "spot",
          "van", "campsite"),
    _room("Please don't pick the [MASK], let everyone enjoy them.", "flowers", "apples",
          "berries", "roses", "fruit", "plants", "daffodils", "tulips", "mushrooms",
          "blackberries", "leaves", "cherries"),
    _room("The moon and the [MASK] were shining in the night sky.", "stars", "planets"),
    # the town
    _room("I posted the letter at the post [MASK] this morning.", "office", "box"),
    _room("There's a lovely little [MASK] on the corner that sells coffee and cake.", "cafe",
          "shop", "bakery", "restaurant", "bar", "place", "deli", "kiosk", "bistro",
          "teashop", "tearoom", "stall", "store"),
    _room("We borrowed three books from the town [MASK].", "library"),
    # time and daily routine
    _room("I usually get [MASK] at seven and have a shower.", "up", "home", "dressed", "back",
          "in", "ready", "changed"),
    _room("It's getting late, it's almost time for [MASK].", "bed", "dinner", "supper", "tea",
          "sleep", "bedtime"),
    _room("Yesterday was Monday, so today is [MASK].", "tuesday"),
    # reading and writing
    _room("Can I borrow your [MASK]? Mine has run out of ink.", "pen", "pens", "biro",
          "printer", "cartridge", "marker"),
    _room("In the fairy tale, the prince and princess got [MASK] in the end.", "married",
          "engaged", "together", "home", "lost", "away", "back", "rich"),
    _room("I looked up the word in the [MASK] to check its meaning.", "dictionary", "book",
          "glossary", "thesaurus", "encyclopedia", "encyclopaedia", "index", "internet",
          "text", "textbook", "web", "notes"),
)
"""The fifth room set: 48 everyday sentences, three for each of the sixteen everyday scenes,
written on 2026-11-29 by an author who had not read the toy world's scenes, facts or word
lists, before the facts were retold (every fact said three or more ways) and before any model
was run on it. Held out of every corpus like the others."""


ROOM_SETS: dict[str, tuple[RoomSentence, ...]] = {
    "a": ROOM_SENTENCES, "b": ROOM_SENTENCES_B, "c": ROOM_SENTENCES_C,
    "d": ROOM_SENTENCES_D, "e": ROOM_SENTENCES_E}
"""The room sets by name, as ``benchmarks/room_sentences.py --set`` takes them."""


@functools.cache
def room_sentence_pattern() -> re.Pattern:
    """One regular expression matching any room sentence with any single word for its mask.

    Case and the spaces around punctuation are ignored, so that a generated sentence that
    says a room sentence with a capital letter or another answer is caught too.
    """
    alternatives = []
    for room in (sentence for sentences in ROOM_SETS.values() for sentence in sentences):
        before, after = room.text.split("[MASK]")
        alternatives.append(_loose(before) + r"[\w'-]+" + _loose(after))
    return re.compile(r"^\s*(?:" + "|".join(alternatives) + r")\s*$", re.IGNORECASE)


def _loose(text: str) -> str:
    """``text`` as a regular expression in which a run of spaces may be any run of spaces."""
    return "".join(r"\s+" if part.isspace() else re.escape(part)
                   for part in re.split(r"(\s+)", text) if part)


def is_room_sentence(sentence: str) -> bool:
    """True when ``sentence`` is a room sentence of any set with some word in its mask."""
    return room_sentence_pattern().match(sentence) is not None


def word_runs(text: str, n: int = 4) -> set[tuple[str, ...]]:
    """The runs of ``n`` words in ``text``, lower case, its gap (``[MASK]`` or ``{x}``) written
    ``X`` and any other slot ``S``: two sentences that share a run say nearly the same thing.

    The facts of ``minibert.data.facts`` share no run with room sets a, b, d and e (a test checks);
    the benchmark names each sentence of set c that shares a run with a fact's frame.
    """
    text = re.sub(r"\[mask\]|\{x\}", " X ", text.lower())
    words = re.findall(r"[a-z0-9']+|X|S", re.sub(r"\{\w+\}", " S ", text))
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}
