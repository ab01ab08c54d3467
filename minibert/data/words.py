"""Word lists by part of speech, and the sentence frames that use them, for the everyday scenes.

The scenes of ``minibert.data.everyday`` say the things a class talks about; these frames
make sure the common words of English come up too, each often enough to earn a whole token of
the vocabulary and a place in the model's predictions. A frame is a sentence with slots
(``{w_noun}``, ``{w_verbing}``, ...) that the lists below fill: nouns, plurals, adjectives,
verbs in each of their forms, adverbs. The lists are drawn without replacement in a shuffled
cycle (``minibert.data.corpus``), so every word comes up about equally often; ``CHAT`` holds
whole sentences, in the grammar a room uses (questions, negation, contractions), that carry
the small words no list would.

A few of the 3,000 most frequent English words are left out on purpose: swearing, and bits of
web text; docs/data.md lists them. Every list and sentence was written for this project.
"""

from __future__ import annotations

__all__ = ["CHAT", "FRAMES", "WORD_SLOTS"]


def _w(text: str) -> tuple[str, ...]:
    return tuple(text.split())


WORD_SLOTS: dict[str, tuple[str, ...]] = {
    "w_noun": _w("""
        state government group case person point order area law war president information
        video court fact death problem research girl matter idea series woman community north
        future reason development form act media education list example experience type
        chance process action moment department energy force issue space term land period
        security industry couple sense event member present design king policy society east
        movie performance press director relationship source value evidence production rate
        stuff tax management model size step range review trade attention character chief
        property quality style oil attack decision situation technology choice election
        career figure loss version army internet practice access base offer risk truth
        district minister culture growth pain respect response century charge effect peace
        track weight association capital committee conference difference population beginning
        campaign content message region section contact kid link nature construction episode
        income justice movement safety scene ability collection knowledge search claim fear
        judge lady leader material opportunity unit bar battle brain image insurance majority
        opening opinion rule administration approach cancer defense stock effort impact lack
        operation organization address analysis color commission competition dream luck
        marriage skin congress damage disease doubt crime reality advice agreement award block
        challenge comment equipment nation purpose theory agency cell drug economy environment
        executive mass meaning mission politics status trial activity app application
        condition division freedom location queen attempt channel exchange protection species
        speech bottom demand investment partner solution structure brand budget faith fashion
        feature generation hearing metal profile seat target understanding agent authority
        foundation ring soul waste adult chairman edition engineering institute method option
        prison senate stone strength winner camp spirit trouble advantage function influence
        marketing progress wood background birth concept copy host housing labor leadership
        length setting ad magic request stick volume aid beauty conversation investigation
        responsibility surprise variety violence youth injury parliament reference religion
        strategy web blog core description presence reaction stress victory failure fuel pair
        prince quarter session shape zone accident alternative capacity climate discussion
        duty governor enemy intelligence labour limit ocean profit proof suit appearance
        attorney behavior honor minimum survey user communication flow girlfriend hero joke
        transport appeal device drama entry era factor grant mistake schedule smoke abuse
        candidate concern hole sector advance chain confidence finance identity aircraft
        argument conflict debate distribution fault phase revenue talent truck context
        coverage display funding ministry mode vision champion cream crisis editor jail
        kingdom literature selection struggle theme wave alcohol assembly combination desire
        draft cycle entertainment facility maximum republic reserve row switch territory
        threat assistance bond boyfriend corporation danger dollar mile motion prize
        resolution universe attitude definition favor frame guest heaven independence plot
        possibility recovery senator sentence academy bunch category chat detail diet index
        mess navy opposition parent pleasure programme representative scheme storage tank
        transportation yard button constitution consumer creation depression employment
        expert importance manufacturing mining object pattern perspective revolution tool
        tournament victim ban carbon circle crash depth deputy error existence expression
        legislation maintenance mate noise origin panel personality relief resistance shame
        advertising bible cable championship client empire expansion incident sight contest
        height motor portion princess protein reform sample debut decade fantasy introduction
        license principal shipping therapy witness aim campus childhood comedy commander
        comparison defeat defence democracy plastic quote recording suspect tie trend wealth
        approval convention document gang graduate tv pc id country result role amount
        language store text subject direction plant benefit grade gift connection vehicle
        sport taste purchase task item manner memory article chair number site center cause
        thing cross guy eye nose battery retirement drawing wine beer
    """),
    "w_person": _w("""
        John David James Michael Peter William Robert Thomas Jack Louis Chris Mike Richard
        Joe Mary Charles Frank Harry Steve Ben Sam Tony Bob Alex Daniel Jim Kim Nick Ryan
        Adam Andrew Grace Kevin Matt Edward Joseph Dan Tim Jordan Jan Ed George Paul Henry
        Scott Lee Ray Martin Taylor Max
    """),
    "w_country": _w("""
        France Germany Spain Italy Japan China India Canada Australia Brazil Mexico Ireland
        Scotland England Wales Russia Turkey Pakistan Korea Iran Israel Africa America Europe
        Asia Britain
    """),
    "w_nouns": _w("""
        things women states men games others guys members months services issues problems
        rights companies girls areas questions countries changes groups terms events rules
        ways cases products boys places sales plans forces jobs numbers studies levels teams
        costs families features reasons activities calls details names resources programs
        reports laws parties characters comments officers operations claims types benefits
        cities ideas songs sources americans views actions arms employees individuals leaders
        projects nations movies videos items materials standards classes drugs efforts skills
        units cells funds models sites teachers figures forms lies orders sides steps citizens
        decisions facts houses links pieces articles awards communities feelings options
        policies signs arts elements powers soldiers bodies buildings homes sets attacks
        charges methods officials relationships affairs heads legs measures organizations
        values businesses elections facilities interests hits owners posts properties taxes
        acts applications factors films ladies requirements residents troops votes
        authorities causes examples positions shots stores moments vehicles humans markets
        opportunities talks statistics adults circumstances communications concerns devices
        dreams faces folks matches tools wars decades institutions reviews scenes tips assets
        candidates drivers partners rooms victims agents doctors experiences practices ships
        writers agencies dates doors messages politicians ages deaths fees regions seats
        balls bills differences experts representatives chances clubs kinds loans objects
        purposes statements techniques yards aspects attempts champions fingers functions
        thoughts weapons answers feet conditions effects relations deals windows
    """),
    "w_adj": _w("""
        sure free real different public american kind able social true wrong pretty nice
        international possible human special fun political available former fine similar
        total likely military personal dead private british higher average certain longer
        original cool official round federal central various natural amazing complete
        economic involved serious entire poor european financial foreign legal super crazy
        daily difficult modern popular huge missing professional recent specific standard
        limited double potential russian western female individual interesting leading
        particular previous fair positive welcome additional quick significant favorite wide
        fit german global interested regular physical stupid successful active australian
        biggest civil independent worst awesome commercial latest multiple senior direct
        grand indian necessary rich greater largest overall basic effective male christian
        holy responsible complex highest actual fat mobile powerful religious wonderful
        southern traditional critical digital mental separate smart african larger weird
        prime smaller correct dangerous greatest negative aware eastern impossible dear rare
        tough alive easier fellow concerned criminal cultural technical unique evil mad
        closer democratic excellent honest nuclear solid spanish classic electric initial
        massive proper regional upper useful willing advanced cheap fantastic industrial
        joint canadian environmental asian domestic historical native supreme younger ancient
        illegal soft appropriate scientific emotional internal italian liberal weak cute
        equal fake numerous urban corporate determined pure secure strange experienced false
        incredible obvious remaining tiny usual conservative drunk essential familiar guilty
        jewish medium relevant unable creative educational extreme scottish careful empty
        reasonable rural typical dedicated random academic accurate chemical competitive
        harder permanent weekly exclusive pregnant severe brilliant catholic dirty electronic
        interior nearby stronger absolute constant dumb irish attractive broad hidden marine
        raw secondary solar ultimate unknown blind brief engaged immediate presidential
        clinical detailed exact valuable wise muslim japanese chinese lucky existing
        surprised comfortable upset scared capable exciting musical pink black sweet
    """),
    "w_verb": _w("""
        know make think say give feel keep mean support tell believe try hope become control
        remember ask move check meet fight miss include lead happen hold wish guess learn
        provide save stand drive trust send vote add enjoy release continue increase lose
        pick seem sign build listen create allow expect consider drop sell agree spend
        imagine protect touch notice sit carry explain avoid catch accept appear receive ride
        serve begin worry count realize remain throw pull push apply draw enter gain spread
        bet handle improve prevent decide produce require prove wake develop raise roll
        suggest treat appreciate exist mention reduce mix promise remove ensure jump download
        feed teach laugh pack perform maintain measure split fill smile blame determine seek
        hang affect deserve register admit kiss replace represent achieve assume prefer
        describe identify promote arrest attend deliver prepare hide manage print quit burn
        respond destroy grab paint recognize survive swear contain fail recommend cry
        click lie dance fly blow conduct suppose wonder hate share kill
    """),
    "w_verbed": _w("""
        thought done given killed shot died happened received decided considered published
        created allowed included provided described reported continued developed meant
        established shown caused produced offered placed mentioned returned seemed completed
        liked managed owned believed presented discovered stated issued entered introduced
        proposed treated listed noted planned combined connected performed selected shared
        supported taught accepted confirmed grown committed focused affected arrested claimed
        extended reduced elected fired identified inspired launched noticed estimated
        remained voted chosen destroyed granted improved appointed controlled enjoyed
        realized conducted understood defined chose declared earned headed refused drawn
        represented attached attacked expressed recognized registered suffered adopted
        exposed opposed organized protected founded lay driven linked increased directed
        taken
    """),
    "w_verbing": _w("""
        being making trying using coming taking saying talking thinking giving starting
        seeing moving watching winning asking calling growing fighting telling driving
        planning holding showing putting sitting standing walking finding losing wearing
        keeping acting selling happening helping changing buying paying breaking teaching
        providing bringing drinking spending supporting turning creating increasing adding
        hoping lying developing falling listening sharing testing considering passing trading
        allowing serving voting carrying cutting sending dealing offering receiving saving
        seeking crying performing sleeping staying reporting causing suffering wondering
        burning facing letting speaking
    """),
    "w_verbs": _w("""
        says comes seems shows knows gives sounds happens includes feels uses appears becomes
        follows provides remains continues tells thinks turns ends helps matters wins
        contains allows keeps requires leads falls begins finds holds returns moves sees
        depends puts tries covers lets
    """),
    "w_adverb": _w("""
        really actually maybe probably quite especially exactly perhaps currently simply
        recently certainly completely nearly absolutely immediately definitely particularly
        generally seriously clearly easily literally directly fully highly eventually
        otherwise therefore truly mostly previously totally apparently obviously extremely
        indeed possibly slightly entirely honestly originally suddenly specifically properly
        approximately basically typically unfortunately largely perfectly mainly normally
        personally ultimately frequently hopefully somewhat surely significantly widely
        heavily closely constantly hardly officially somehow automatically regularly fairly
        relatively earlier forever already worldwide anyway often
    """),
    "letter": _w("b c e f g h j k l m n o p q r s t u v w x y"),
    "usplace": (
        "New York", "Los Angeles", "San Francisco", "Hong Kong", "Texas", "California",
        "Florida", "Virginia", "Ohio", "Michigan", "North Carolina", "New Jersey",
        "Washington DC", "Hollywood",
    ),
    "title": _w("Mr Mrs Ms Dr"),
    "website": _w("Facebook Twitter YouTube Google"),
    "informal": (
        "I'm gonna be late, sorry!", "Wanna come to the party?", "I gotta go now.",
        "It's kinda cold today.", "Haha, that's funny!", "Dude, where are you?",
        "See ya tomorrow!", "Lol, I can't believe it.", "Yeah, sure, why not?",
        "Ok, I'll be there at 8.", "Wow, that's awesome!", "Hey, how are you?",
    ),
}
"""Slot name -> the words it is filled with; each list is drawn in a shuffled cycle."""

FRAMES: tuple[str, ...] = (
    "We talked about the {w_noun} and the {w_noun} at dinner.",
    "{name} wrote a long report on the {w_noun}.",
    "Is the {w_noun} more important than the {w_noun}?",
    "I don't know much about the {w_noun}, but I want to learn.",
    "The {w_noun} is {w_adj}, and the {w_noun} is {w_adj}.",
    "{friend} asked me what I think of the {w_noun}.",
    "There was a story about the {w_noun} in the news today.",
    "There were many {w_nouns} and {w_nouns} in {place}.",
    "{name} read a book about {w_nouns} and {w_nouns}.",
    "Do you know anything about {w_nouns}?",
    "We need more {w_nouns} and fewer {w_nouns}.",
    "I think it's {w_adj}, but {friend} says it's {w_adj}.",
    "The new {w_noun} seems {w_adj} to me.",
    "Everyone says the {w_noun} is {w_adj}, but I don't agree.",
    "The {w_noun} was more {w_adj} than the {w_noun}.",
    "What do you know about the {w_noun} and the {w_noun}?",
    "My {relative} told me about a {w_adj} {w_noun}.",
    "It was a {w_adj} story about {w_nouns} and {w_nouns}.",
    "{name} said the {w_noun} was {w_adj} and a bit {w_adj}.",
    "The teacher asked us about the {w_noun}, the {w_noun} and the {w_noun}.",
    "Our {w_noun} is {w_adj}, and our {w_nouns} are {w_adj} too.",
    "{name}'s birthday is in {month}, and mine is in {month}.",
    "Do you want to {w_verb} it today?",
    "We will {w_verb} it next week, and then we will {w_verb} it again.",
    "{name} didn't want to {w_verb} it.",
    "You should {w_verb} it before it is too late.",
    "Can you {w_verb} it for me, please?",
    "Yesterday, {name} {w_verbed} it again.",
    "It was {w_verbed} last year, and it was {w_verbed} again this year.",
    "The plan was {w_verbed} by the council and {w_verbed} by the town.",
    "{name} was {w_verbing} when I called.",
    "Are you {w_verbing} it today, or are you {w_verbing} it tomorrow?",
    "We were {w_verbing} all afternoon.",
    "{name} {w_verbs} it every day, and {friend} {w_verbs} it too.",
    "Nobody {w_verbs} it like {name} does.",
    "{name} {w_adverb} said yes.",
    "I {w_adverb} think you're right, and {friend} {w_adverb} agrees.",
    "{He} answered the question {w_adverb}.",
    "{name} wrote the letter {letter} on the board.",
    "Your word starts with {letter} and ends with {letter}.",
    "{name} moved to {usplace} last year.",
    "{title} {surname} is our new neighbour.",
    "{w_person} and {w_person} came to see us on {day}.",
    "I met {w_person} at the station, and {w_person} was there too.",
    "{name} has never been to {w_country}, but {w_person} has.",
    "{w_person} comes from {w_country}, and {w_person} comes from {w_country}.",
    "{name} watched a video about {w_nouns} on {website}.",
    "{friend} sent {name} a message: \"{informal}\"",
)
"""Sentence frames whose slots are ``WORD_SLOTS`` (or the scene's own slots)."""

CHAT: tuple[str, ...] = (
    "If you don't know the answer, just ask someone.",
    "She said that she would come, but she didn't.",
    "They're not here yet. Maybe they're stuck in traffic.",
    "That's exactly what I was thinking!",
    "There's nothing in the fridge, so we'll have to go shopping.",
    "Isn't it strange that nobody called?",
    "I'd like to go, but I can't.",
    "You'll never guess who I saw today!",
    "Wouldn't it be nice to live by the sea?",
    "We've been waiting for over an hour.",
    "You've done a great job, thank you.",
    "Haven't you finished yet? No, not yet.",
    "Aren't you coming with us?",
    "He'll be back in ten minutes, I think.",
    "He'd never seen so much snow before.",
    "It'll be fine, don't worry.",
    "Who's there? It's only me.",
    "You'd better hurry, or you'll miss the train.",
    "You shouldn't eat so much sugar.",
    "They've already left, haven't they?",
    "They'll call us when they arrive.",
    "It wasn't my fault! I wasn't even there.",
    "We weren't sure what to do.",
    "He hasn't eaten anything all day.",
    "Whose bag is this? Is it yours or mine?",
    "Either we go now, or we don't go at all.",
    "Neither of them knew the way, nor did I.",
    "Although it was late, everybody stayed.",
    "Whether you like it or not, we're leaving at six.",
    "Whatever happens, I'll be there for you.",
    "Whenever it rains, the road floods.",
    "Unless you hurry, you'll be late.",
    "Despite the rain, we went for a walk.",
    "Except for {friend}, everyone came to the party.",
    "Anybody can learn to swim, but somebody has to teach them.",
    "Is anyone home? Hello? Anybody?",
    "I looked everywhere, but I couldn't find it anywhere.",
    "It must be somewhere in the house.",
    "The story was told throughout the town.",
    "We walked towards the river, beyond the old mill.",
    "Upon arriving, {name} went straight to bed.",
    "The book is about {w_nouns}, unlike the film.",
    "I did it myself, and you can do it yourself.",
    "The children made the cake themselves.",
    "We did it all by ourselves.",
    "Anna hurt herself, but she was fine. Tom hurt himself too.",
    "The machine turns itself off at night.",
    "Both of them are teachers, and each of them has a car.",
    "Most of us were tired, and some of us were hungry.",
    "There are plenty of chairs, so sit wherever you like.",
    "Lots of people came, at least a hundred.",
    "I have a bit of time, so let's talk.",
    "Yes, sir, I'll do it right away.",
    "Oh, I didn't see you there!",
    "Ah, now I understand.",
    "Welcome home! Did you have a good trip?",
    "Please don't touch that, it's hot.",
    "Let's go! We're going to be late.",
    "Here's the book I told you about.",
    "What's your name? My name is {name}.",
    "How old are you? I'm {number}.",
    "Where do you live? I live in {place}.",
    "Why are you so happy today?",
    "Which one do you want, this one or that one?",
    "Whom did you see at the party?",
    "I'm not sure, but I think so.",
    "It doesn't matter, really.",
    "She's my best friend, and he's my brother.",
    "We shall see what happens.",
    "Thank God you're here!",
    "The price rose by {digit} per cent this year.",
    "About {digit} percent of the students walk to school.",
    "The city has {digit} million people.",
    "The company is worth a billion dollars.",
    "The score was zero to {digit}.",
    "The match was Ashby vs Foxton.",
    "We flew to Sydney via London.",
    "Bring something to eat, e.g. bread or fruit.",
    "We bought apples, pears, etc.",
    "The film starts at {hour} pm.",
    "The show ends at {hour} am.",
    "King Henry II and King George III were kings of England.",
    "{name} went to the U.S. and the UK last year.",
    "The UK and the EU signed a new deal.",
    "We watched the news on the BBC.",
    "The NFL season starts in September.",
    "The Pacific Ocean is the largest ocean on earth.",
    "The Amazon is a long river in South America.",
    "The Soviet Union ended in 1991.",
    "The Democrats and the Republican party held a debate.",
    "The church of St Paul is very old.",
    "Please show your ID at the door.",
    "For more info, ask at the front desk.",
    "{name} works at a tech company called Acme Inc.",
    "The new shop is run by a co-worker of mine.",
    "The café is open non-stop, even mid-week.",
    "{name}'s ex-wife lives in {city}.",
    "The team lost the semi-final.",
    "It was sub-zero last night.",
    "The vice president gave a speech.",
    "{name} plays as a pro now.",
    "There was an anti-war march in the city.",
    "The multi-coloured kite flew high above the park.",
    "{name} goes to pre-school.",
    "Today's weather is cold and wet.",
    "It is the world's tallest building.",
    "The women's team won, and the people's choice was {name}.",
    "The police arrested a man for murder.",
    "The soldiers had guns, and one of them fired a shot.",
    "The army found an old bomb in the field.",
    "No weapon was found at the scene.",
    "The old king died in the war.",
    "Many people were dying of hunger, and the king did nothing.",
    "Hunters shoot birds in the autumn.",
    "The film is about killing a dragon.",
    "Jesus Christ is a figure of the Bible.",
    "The Lord of the Rings is a long book.",
    "The actor became famous in Hollywood.",
    "Personnel must wear an ID badge.",
    "The two companies are equivalent in size.",
    "{name} is aged {number}.",
    "The children are supposed to be in bed.",
    "The show is based on a true story.",
    "According to the news, it will rain.",
    "Due to the snow, the trains were late.",
    "The cost is related to the size.",
    "Most people are associated with a club.",
    "Which house is located near the park?",
    "Tom was intended to be the leader.",
    "What is referred to as the old town is the area by the river.",
    "It occurred to me that you were right.",
    "I tend to get up early.",
    "The first is red and the latter is blue.",
    "Regarding your question, the answer is yes.",
    "In addition, the room has a view of the sea.",
    "The road goes ahead for a mile.",
    "Set the books aside for now.",
    "Keep the two groups apart.",
    "We don't live there anymore.",
    "{name} is retired and lives in {usplace}.",
    "The first premier of the province was elected in 1867.",
    "The armed guard stood at the gate.",
    "The book is entitled A Long Way Home.",
    "Some gender roles are changing.",
    "For instance, you can take the bus.",
    "The combat lasted all night.",
    "Retail prices went up.",
    "{name} was counting the days until the holidays.",
    "The basis of the plan is simple.",
    "The estate covers a thousand acres.",
    "Self help books are popular.",
    "The crowd went forward slowly.",
    "Move the box forward, please.",
    "The plus side is that it's cheap.",
    "The ground was covered in snow.",
    "The real estate agent showed us the house.",
    "We also need some other things, but these are the same as those.",
    "Do you have any questions? I might have one.",
    "This thing is my own, not yours.",
    "What's your phone number?",
    "Everyone came, including the children, though it was late.",
    "It means a lot to me.",
    "I'll be back within an hour.",
    "We met two years ago.",
    "Who else is coming? Anyone else?",
    "I won't tell anyone, I promise.",
    "I'd rather stay at home tonight.",
    "Is there anything further you need?",
    "I cannot hear you, please speak louder.",
    "I hate getting up early.",
    "None of us knew the answer.",
    "I wonder what time it is.",
    "Anyway, let's get back to work.",
    "The bridge was closed, and thus we took the ferry.",
    "Besides, it's too late to go now.",
    "I suppose you're right.",
    "Depending on the weather, we'll walk or take the bus.",
    "The following day, we went home.",
    "What kind of music do you like?",
    "Mind your own business!",
    "The same thing happened to me last year.",
    "She might come later, or she might not.",
    "Any of these will do.",
    "Those shoes are mine.",
    "I got a text from my mom.",
    "Hi! How are you?",
    "Are you okay?",
    "It ain't over yet.",
    "Prior to the meeting, we had lunch.",
    "A ticket is required.",
    "Plants die without water.",
    "The cat tried to kill a mouse.",
    "The police officer had a gun.",
    "They've been dating for a year.",
    "The capital, i.e. the biggest city, is in the north.",
    "To be frank, I don't like it.",
    "The bear lived in the forest.",
    "I think basketball is more fun than baseball or golf.",
    "Birds fly south in the winter.",
    "However, the shop was closed.",
    "{name} flew from the USA to {city}.",
    "It was cold; however, we went out.",
)
"""Whole sentences for the small words and the grammar a room uses."""
