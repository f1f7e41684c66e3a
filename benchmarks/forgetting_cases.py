"""Cases for topic forgetting (lesson_lib.forgetting.Topic): for each topic, texts that say
it (in either language, by name, description or paraphrase) and texts that do not (near
misses: another city, the same province's food, another diet). Written for this benchmark.

DEV: what MARGIN and FLOOR were chosen on. HELD_OUT: other topics, scored once with the
chosen values and never tuned on (benchmarks/forgetting.py prints both)."""

DEV = {
    "Chengdu": {
        "says": ["We chose the 14 May train to Chengdu.", "我住在成都", "我们订了去蓉城的票",
                 "I grew up in the capital of Sichuan province", "Chengdu's hotpot is the best",
                 "Flight CA4113 lands in Chengdu at 10:05", "成都的火锅最好吃",
                 "My hometown is Sichuan's capital", "我在四川省会长大"],
        "not": ["Sichuan food is spicy", "My sister lives in Shanghai", "四川菜很辣",
                "The capital of France is Paris", "I took the train to Chongqing", "我在北京工作",
                "I like pandas", "Book a hotel near the station", "重庆的夜景很美"],
    },
    "vegetarian": {
        "says": ["I am vegetarian", "我吃素", "I don't eat meat", "我是素食者",
                 "No meat for me, I'm a vegetarian", "She cooked a vegetarian curry for me"],
        "not": ["I prefer Celsius", "I'm allergic to peanuts", "我喜欢吃辣", "I love grilled fish",
                "我每天喝咖啡", "Book a table for two"],
    },
    "guitar": {
        "says": ["My guitar lessons are on Monday", "我在学吉他", "I bought a new acoustic guitar",
                 "Practise guitar chords for twenty minutes"],
        "not": ["I play the piano", "Music helps me focus", "我喜欢听音乐", "My violin needs new strings"],
    },
}

HELD_OUT = {
    "Tokyo": {
        "says": ["We flew to Tokyo in April", "我下个月去东京", "Our hotel in Tokyo is near Shinjuku",
                 "东京的樱花很漂亮", "Japan's capital was crowded"],
        "not": ["We flew to Osaka in April", "我下个月去大阪", "I like sushi", "Seoul was cold",
                "北京的秋天很美"],
    },
    "coffee": {
        "says": ["I drink coffee every morning", "我每天早上喝咖啡", "A flat white, no sugar",
                 "My espresso machine broke", "咖啡让我睡不着"],
        "not": ["I drink green tea", "我喜欢喝茶", "The meeting is at nine", "I'm allergic to milk",
                "My kettle broke"],
    },
    "Beijing": {
        "says": ["I work in Beijing", "我在北京工作", "China's capital has a new airport",
                 "The flight to Peking was delayed", "首都北京的冬天很冷"],
        "not": ["I work in Shanghai", "我在上海工作", "Tianjin is near the sea", "The capital of Japan",
                "Hebei province is large"],
    },
}
