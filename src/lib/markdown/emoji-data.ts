// Built-in Unicode emoji: names (the reference's naming where known, otherwise the common
// short names) and their codes in the reference's form: lower-case hex code points,
// 4 digits minimum, joined by '-', without the U+FE0F variation selector.
// A subset of the full Unicode set; an entry is "canonical_name code alias...".

const TABLE = `
grinning 1f600, smiley 1f603, big_smile 1f604, grinning_face_with_smiling_eyes 1f601 grin,
laughing 1f606 lol satisfied, sweat_smile 1f605, rolling_on_the_floor_laughing 1f923 rofl,
joy 1f602 tears, smile 1f642 slight_smile, upside_down 1f643 oops, wink 1f609, blush 1f60a,
innocent 1f607 halo, smiling_face_with_hearts 1f970, heart_eyes 1f60d in_love,
star_struck 1f929, heart_kiss 1f618 blow_a_kiss kissing_heart, kiss 1f617 kissing, relaxed 263a,
kiss_with_blush 1f61a, kiss_smiling_eyes 1f619, yum 1f60b, stuck_out_tongue 1f61b mischievous,
stuck_out_tongue_wink 1f61c joking crazy, zany_face 1f92a, stuck_out_tongue_closed_eyes 1f61d,
money_face 1f911 kaching, hug 1f917 arms_open hugs, hand_over_mouth 1f92d, shushing_face 1f92b,
thinking 1f914, zipper_mouth 1f910 lips_are_sealed, raised_eyebrow 1f928 skeptical,
neutral 1f610, expressionless 1f611, no_mouth 1f636, smirk 1f60f smug, unamused 1f612,
rolling_eyes 1f644, grimacing 1f62c, lying 1f925, relieved 1f60c, pensive 1f614, sleepy 1f62a,
drooling 1f924, sleeping 1f634, mask 1f637, sick 1f912 flu, hurt 1f915 head_bandage,
nauseated 1f922 queasy, vomiting 1f92e, sneezing 1f927, hot_face 1f975, cold_face 1f976,
woozy_face 1f974, dizzy_face 1f635, exploding_head 1f92f mind_blown, cowboy 1f920,
partying_face 1f973, sunglasses 1f60e, nerd 1f913 geek, monocle 1f9d0,
oh_no 1f615 confused half_frown concerned, worried 1f61f, frown 1f641 slight_frown,
sad 2639 big_frown, open_mouth 1f62e, hushed 1f62f, astonished 1f632, flushed 1f633,
pleading_face 1f97a, anguished 1f627, fear 1f628 fearful, cold_sweat 1f630,
sad_relieved 1f625 disappointed_relieved, cry 1f622, sob 1f62d, scream 1f631, confounded 1f616,
persevere 1f623, disappointed 1f61e, sweat 1f613, weary 1f629, tired_face 1f62b,
yawning_face 1f971, triumph 1f624, angry 1f620, rage 1f621 mad, cursing 1f92c,
smiling_imp 1f608, imp 1f47f, skull 1f480, skull_and_crossbones 2620, poop 1f4a9 hankey,
clown 1f921, ogre 1f479, goblin 1f47a, ghost 1f47b, alien 1f47d, space_invader 1f47e,
robot 1f916, smiley_cat 1f63a, smile_cat 1f638, joy_cat 1f639, heart_eyes_cat 1f63b,
smirk_cat 1f63c, kissing_cat 1f63d, scream_cat 1f640, crying_cat 1f63f, angry_cat 1f63e,
see_no_evil 1f648, hear_no_evil 1f649, speak_no_evil 1f64a,

kiss_mark 1f48b, love_letter 1f48c, cupid 1f498, gift_heart 1f49d, sparkling_heart 1f496,
heart_pulse 1f497 growing_heart, heartbeat 1f493, revolving_hearts 1f49e, two_hearts 1f495,
heart_exclamation 2763, broken_heart 1f494, heart 2764 love, orange_heart 1f9e1,
yellow_heart 1f49b, green_heart 1f49a, blue_heart 1f499, purple_heart 1f49c, brown_heart 1f90e,
black_heart 1f5a4, white_heart 1f90d, 100 1f4af, anger 1f4a2, collision 1f4a5 boom,
dizzy 1f4ab, sweat_drops 1f4a6, dash 1f4a8, hole 1f573, speech_bubble 1f4ac, thought 1f4ad,
zzz 1f4a4,

wave 1f44b, raised_back_of_hand 1f91a, hand 270b raised_hand, spock 1f596 vulcan,
ok 1f44c ok_hand, pinching_hand 1f90f, victory 270c peace_sign, crossed_fingers 1f91e,
love_you 1f91f, rock_on 1f918 metal, call_me 1f919, point_left 1f448, point_right 1f449,
point_up 1f446, middle_finger 1f595, point_down 1f447, +1 1f44d thumbs_up like thumbsup,
-1 1f44e thumbs_down thumbsdown, fist 270a power, punch 1f44a, left_fist 1f91b,
right_fist 1f91c, clap 1f44f applause, raised_hands 1f64c praise, open_hands 1f450,
palms_up_together 1f932, handshake 1f91d, pray 1f64f folded_hands, writing 270d,
nail_polish 1f485, selfie 1f933, muscle 1f4aa flex, ear 1f442, nose 1f443, brain 1f9e0,
eyes 1f440 looking, eye 1f441, tongue 1f445, lips 1f444, baby 1f476, child 1f9d2, boy 1f466,
girl 1f467, person 1f9d1, man 1f468, woman 1f469, older_person 1f9d3, old_man 1f474,
old_woman 1f475, police 1f46e cop, detective 1f575, guard 1f482, construction_worker 1f477,
prince 1f934, princess 1f478, santa 1f385, superhero 1f9b8, mage 1f9d9, zombie 1f9df,
facepalm 1f926, shrug 1f937, tipping_hand 1f481, raising_hand 1f64b, bow 1f647,
walking 1f6b6, running 1f3c3 runner, dancer 1f483, man_dancing 1f57a, silhouette 1f464,
silhouettes 1f465, family 1f46a, footprints 1f463,

monkey_face 1f435, monkey 1f412, gorilla 1f98d, puppy 1f436, dog 1f415, poodle 1f429,
wolf 1f43a, fox 1f98a, raccoon 1f99d, kitten 1f431, cat 1f408, lion 1f981, tiger_cub 1f42f,
tiger 1f405, pony 1f434, horse 1f40e, unicorn 1f984, zebra 1f993, deer 1f98c, calf 1f42e,
ox 1f402, cow 1f404, piglet 1f437, pig 1f416, boar 1f417, pig_nose 1f43d, ram 1f40f,
sheep 1f411, goat 1f410, dromedary_camel 1f42a, camel 1f42b, llama 1f999, giraffe 1f992,
elephant 1f418, rhinoceros 1f98f, hippopotamus 1f99b, dormouse 1f42d, mouse 1f401, rat 1f400,
hamster 1f439, bunny 1f430, rabbit 1f407, chipmunk 1f43f, hedgehog 1f994, bat 1f987,
bear 1f43b, koala 1f428, panda 1f43c, sloth 1f9a5, kangaroo 1f998, badger 1f9a1,
paw_prints 1f43e, turkey 1f983, chicken 1f414, rooster 1f413, hatching_chick 1f423,
chick 1f424, hatched_chick 1f425, bird 1f426, penguin 1f427, dove 1f54a, eagle 1f985,
duck 1f986, swan 1f9a2, owl 1f989, flamingo 1f9a9, peacock 1f99a, parrot 1f99c, frog 1f438,
crocodile 1f40a, turtle 1f422, lizard 1f98e, snake 1f40d, dragon_face 1f432, dragon 1f409,
sauropod 1f995, t_rex 1f996, whale 1f433, dolphin 1f42c flipper, fish 1f41f,
tropical_fish 1f420, blowfish 1f421, shark 1f988, octopus 1f419, shell 1f41a, snail 1f40c,
butterfly 1f98b, bug 1f41b caterpillar, ant 1f41c, bee 1f41d honeybee, beetle 1f41e,
cricket 1f997, spider 1f577, spider_web 1f578, scorpion 1f982, mosquito 1f99f, microbe 1f9a0,
bouquet 1f490, cherry_blossom 1f338, rosette 1f3f5, rose 1f339, wilted_flower 1f940,
hibiscus 1f33a, sunflower 1f33b, blossom 1f33c, tulip 1f337, seedling 1f331,
evergreen_tree 1f332, tree 1f333 deciduous_tree, palm_tree 1f334, cactus 1f335, herb 1f33f,
shamrock 2618, four_leaf_clover 1f340, maple_leaf 1f341, fallen_leaf 1f342, leaves 1f343,
mushroom 1f344,

grapes 1f347, melon 1f348, watermelon 1f349, orange 1f34a tangerine, lemon 1f34b,
banana 1f34c, pineapple 1f34d, mango 1f96d, apple 1f34e, green_apple 1f34f, pear 1f350,
peach 1f351, cherries 1f352, strawberry 1f353, kiwi 1f95d, tomato 1f345, coconut 1f965,
avocado 1f951, eggplant 1f346, potato 1f954, carrot 1f955, corn 1f33d, hot_pepper 1f336,
cucumber 1f952, broccoli 1f966, garlic 1f9c4, onion 1f9c5, peanuts 1f95c, chestnut 1f330,
bread 1f35e, croissant 1f950, baguette 1f956, pretzel 1f968, bagel 1f96f, pancakes 1f95e,
waffle 1f9c7, cheese 1f9c0, meat 1f356, drumstick 1f357 poultry, bacon 1f953,
hamburger 1f354, fries 1f35f, pizza 1f355, hotdog 1f32d, sandwich 1f96a, taco 1f32e,
burrito 1f32f, egg 1f95a, cooking 1f373, salad 1f957, popcorn 1f37f, butter 1f9c8, salt 1f9c2,
canned_food 1f96b, bento 1f371, rice_cracker 1f358, rice_ball 1f359, rice 1f35a, curry 1f35b,
ramen 1f35c, spaghetti 1f35d, sweet_potato 1f360, oden 1f362, sushi 1f363, fried_shrimp 1f364,
fish_cake 1f365, moon_cake 1f96e, dango 1f361, dumpling 1f95f, fortune_cookie 1f960,
takeout_box 1f961, crab 1f980, lobster 1f99e, shrimp 1f990, squid 1f991, oyster 1f9aa,
soft_serve 1f366, shaved_ice 1f367, ice_cream 1f368, doughnut 1f369 donut, cookie 1f36a,
birthday 1f382, cake 1f370 shortcake, cupcake 1f9c1, pie 1f967, chocolate 1f36b, candy 1f36c,
lollipop 1f36d, custard 1f36e, honey 1f36f, baby_bottle 1f37c, milk 1f95b, coffee 2615,
tea 1f375, sake 1f376, champagne 1f37e, wine 1f377, cocktail 1f378, tropical_drink 1f379,
beer 1f37a, beers 1f37b, clink 1f942, tumbler_glass 1f943, cup_with_straw 1f964,
ice_cube 1f9ca, chopsticks 1f962, fork_and_knife 1f374, spoon 1f944, knife 1f52a,

earth_africa 1f30d, earth_americas 1f30e, earth_asia 1f30f, globe 1f310, world_map 1f5fa,
mountain 26f0, volcano 1f30b, mount_fuji 1f5fb, camping 1f3d5, beach 1f3d6, desert 1f3dc,
island 1f3dd, stadium 1f3df, classical_building 1f3db, house 1f3e0, house_with_garden 1f3e1,
office 1f3e2, post_office 1f3e3, hospital 1f3e5, bank 1f3e6, hotel 1f3e8, school 1f3eb,
factory 1f3ed, castle 1f3f0, wedding 1f492, tokyo_tower 1f5fc, statue_of_liberty 1f5fd,
church 26ea, mosque 1f54c, synagogue 1f54d, fountain 26f2, tent 26fa, foggy 1f301,
night_with_stars 1f303, sunrise 1f305, city_sunset 1f306, bridge_at_night 1f309,
carousel_horse 1f3a0, ferris_wheel 1f3a1, roller_coaster 1f3a2, barber 1f488,
circus_tent 1f3aa, steam_locomotive 1f682, railway_car 1f683, bullet_train 1f685,
metro 1f687, station 1f689, tram 1f68a, monorail 1f69d, bus 1f68c, trolleybus 1f68e,
minibus 1f690, ambulance 1f691, fire_engine 1f692, police_car 1f693, taxi 1f695,
car 1f697 red_car, blue_car 1f699, truck 1f69a, tractor 1f69c, racing_car 1f3ce,
motorcycle 1f3cd, scooter 1f6f4, bike 1f6b2 bicycle, bus_stop 1f68f, motorway 1f6e3,
railway_track 1f6e4, fuel_pump 26fd, rotating_light 1f6a8 siren, traffic_light 1f6a5,
stop_sign 1f6d1, construction 1f6a7, anchor 2693, boat 26f5 sailboat, canoe 1f6f6,
speedboat 1f6a4, ship 1f6a2, airplane 2708 plane, small_airplane 1f6e9,
airplane_departure 1f6eb, airplane_arriving 1f6ec, parachute 1fa82, seat 1f4ba,
helicopter 1f681, rocket 1f680, satellite 1f6f0, hourglass 231b, hourglass_flowing_sand 23f3,
watch 231a, alarm_clock 23f0, stopwatch 23f1, timer 23f2, mantelpiece_clock 1f570,
new_moon 1f311, full_moon 1f315, moon 1f319 crescent_moon, thermometer 1f321, sunny 2600 sun,
star 2b50, glowing_star 1f31f, shooting_star 1f320, milky_way 1f30c, cloud 2601,
partly_sunny 26c5, thunderstorm 26c8, rain 1f327, snow 1f328, lightning 1f329, tornado 1f32a,
fog 1f32b, wind_face 1f32c, cyclone 1f300, rainbow 1f308, closed_umbrella 1f302, umbrella 2602,
umbrella_with_rain 2614, high_voltage 26a1 zap, snowflake 2744, snowman 2603,
snowman_without_snow 26c4, comet 2604, fire 1f525 lit flame, droplet 1f4a7, ocean 1f30a,

jack_o_lantern 1f383 pumpkin, christmas_tree 1f384, fireworks 1f386, sparkler 1f387,
firecracker 1f9e8, sparkles 2728, balloon 1f388, tada 1f389 party_popper, confetti 1f38a,
tanabata_tree 1f38b, bamboo 1f38d, dolls 1f38e, carp_streamer 1f38f, wind_chime 1f390,
moon_ceremony 1f391, ribbon 1f380, gift 1f381 present, reminder_ribbon 1f397, tickets 1f39f,
ticket 1f3ab, military_medal 1f396, trophy 1f3c6, sports_medal 1f3c5, first_place 1f947 gold,
second_place 1f948 silver, third_place 1f949 bronze, soccer 26bd, baseball 26be,
softball 1f94e, basketball 1f3c0, volleyball 1f3d0, football 1f3c8, rugby 1f3c9, tennis 1f3be,
bowling 1f3b3, cricket_game 1f3cf, field_hockey 1f3d1, ice_hockey 1f3d2, ping_pong 1f3d3,
badminton 1f3f8, boxing_glove 1f94a, martial_arts 1f94b, goal 1f945, golf 26f3,
ice_skate 26f8, fishing 1f3a3, running_shirt 1f3bd, ski 1f3bf, sled 1f6f7, curling_stone 1f94c,
direct_hit 1f3af dart, yo_yo 1fa80, kite 1fa81, 8_ball 1f3b1, crystal_ball 1f52e,
video_game 1f3ae, joystick 1f579, slot_machine 1f3b0, game_die 1f3b2 dice, jigsaw 1f9e9 puzzle,
teddy_bear 1f9f8, spades 2660, hearts 2665, diamonds 2666, clubs 2663, chess_pawn 265f,
joker 1f0cf, mahjong 1f004, playing_cards 1f3b4, performing_arts 1f3ad, art 1f3a8 palette,
thread 1f9f5, yarn 1f9f6,

glasses 1f453, dark_sunglasses 1f576, goggles 1f97d, lab_coat 1f97c, necktie 1f454,
shirt 1f455 tshirt, jeans 1f456, scarf 1f9e3, gloves 1f9e4, coat 1f9e5, socks 1f9e6,
dress 1f457, kimono 1f458, bikini 1f459, purse 1f45b, handbag 1f45c, pouch 1f45d,
shopping_bags 1f6cd, backpack 1f392, shoe 1f45e, running_shoe 1f45f athletic_shoe,
high_heels 1f460, sandal 1f461, boot 1f462, crown 1f451, hat 1f452, top_hat 1f3a9,
graduate 1f393 mortar_board, billed_cap 1f9e2, helmet 26d1, lipstick 1f484, ring 1f48d,
gem 1f48e, mute 1f507, speaker 1f508, sound 1f509, loud_sound 1f50a, loudspeaker 1f4e2,
megaphone 1f4e3, bell 1f514 notifications, no_bell 1f515, musical_note 1f3b5 music,
notes 1f3b6, studio_microphone 1f399, microphone 1f3a4, headphones 1f3a7, radio 1f4fb,
saxophone 1f3b7, guitar 1f3b8, piano 1f3b9, trumpet 1f3ba, violin 1f3bb, drum 1f941,
mobile_phone 1f4f1 smartphone iphone, phone 260e telephone, pager 1f4df, fax 1f4e0,
battery 1f50b, electric_plug 1f50c, computer 1f4bb laptop, desktop_computer 1f5a5,
printer 1f5a8, keyboard 2328, computer_mouse 1f5b1, trackball 1f5b2, minidisc 1f4bd,
floppy_disk 1f4be, cd 1f4bf, dvd 1f4c0, abacus 1f9ee, movie_camera 1f3a5, film 1f39e,
projector 1f4fd, clapper 1f3ac, tv 1f4fa, camera 1f4f7, camera_flash 1f4f8,
video_camera 1f4f9, vhs 1f4fc, search 1f50d mag, mag_right 1f50e, candle 1f56f,
light_bulb 1f4a1 bulb idea, flashlight 1f526, lantern 1f3ee, notebook 1f4d3,
closed_book 1f4d5, book 1f4d6 open_book, green_book 1f4d7, blue_book 1f4d8,
orange_book 1f4d9, books 1f4da, ledger 1f4d2, page_with_curl 1f4c3, scroll 1f4dc,
page 1f4c4 page_facing_up, newspaper 1f4f0, bookmark_tabs 1f4d1, bookmark 1f516, label 1f3f7,
moneybag 1f4b0, yen 1f4b4, dollars 1f4b5 dollar, euro 1f4b6, pound 1f4b7,
money_with_wings 1f4b8, credit_card 1f4b3, receipt 1f9fe, chart 1f4b9, email 1f4e7 e-mail,
envelope 2709, incoming_envelope 1f4e8, mailbox 1f4eb, outbox_tray 1f4e4, inbox_tray 1f4e5,
package 1f4e6, pencil 270f, black_nib 2712, fountain_pen 1f58b, pen 1f58a, paintbrush 1f58c,
crayon 1f58d, memo 1f4dd, briefcase 1f4bc, file_folder 1f4c1, open_file_folder 1f4c2,
calendar 1f4c5, tear_off_calendar 1f4c6, spiral_calendar 1f5d3, card_index 1f4c7,
chart_increasing 1f4c8 chart_with_upwards_trend, bar_chart 1f4ca,
chart_decreasing 1f4c9 chart_with_downwards_trend, clipboard 1f4cb, pushpin 1f4cc pin,
round_pushpin 1f4cd, paperclip 1f4ce, straight_ruler 1f4cf, triangular_ruler 1f4d0,
scissors 2702, wastebasket 1f5d1 trash, lock 1f512 locked, unlock 1f513 unlocked, key 1f511,
old_key 1f5dd, hammer 1f528, axe 1fa93, pick 26cf, working_on_it 1f6e0 hammer_and_wrench,
dagger 1f5e1, crossed_swords 2694, gun 1f52b, bow_and_arrow 1f3f9, shield 1f6e1, wrench 1f527,
nut_and_bolt 1f529, gear 2699, clamp 1f5dc, scales 2696 balance, link 1f517, chains 26d3,
toolbox 1f9f0, magnet 1f9f2, alembic 2697, test_tube 1f9ea, petri_dish 1f9eb, dna 1f9ec,
microscope 1f52c, telescope 1f52d, satellite_antenna 1f4e1, syringe 1f489, pill 1f48a,
door 1f6aa, bed 1f6cf, couch 1f6cb, toilet 1f6bd, shower 1f6bf, bathtub 1f6c1, broom 1f9f9,
basket 1f9fa, roll_of_paper 1f9fb, soap 1f9fc, sponge 1f9fd, fire_extinguisher 1f9ef,
shopping_cart 1f6d2, smoking 1f6ac cigarette, coffin 26b0, funeral_urn 26b1, moyai 1f5ff,

atm 1f3e7, put_litter_in_its_place 1f6ae, potable_water 1f6b0, wheelchair 267f, mens 1f6b9,
womens 1f6ba, restroom 1f6bb, baby_symbol 1f6bc, wc 1f6be, passport_control 1f6c2,
customs 1f6c3, baggage_claim 1f6c4, left_luggage 1f6c5, warning 26a0,
children_crossing 1f6b8, no_entry 26d4, prohibited 1f6ab no_entry_sign, no_bicycles 1f6b3,
no_smoking 1f6ad, do_not_litter 1f6af, non_potable_water 1f6b1, no_pedestrians 1f6b7,
no_mobile_phones 1f4f5, underage 1f51e, radioactive 2622, biohazard 2623, up 2b06 arrow_up,
upper_right 2197, right 27a1 arrow_right, lower_right 2198, down 2b07 arrow_down,
lower_left 2199, left 2b05 arrow_left, upper_left 2196, up_down 2195, left_right 2194,
clockwise 1f503 refresh, counterclockwise 1f504, back 1f519, end 1f51a, on 1f51b, soon 1f51c,
top 1f51d, place_of_worship 1f6d0, atom 269b, om 1f549, star_of_david 2721,
wheel_of_dharma 2638, yin_yang 262f, latin_cross 271d, orthodox_cross 2626,
star_and_crescent 262a, peace 262e, menorah 1f54e, shuffle 1f500, repeat 1f501,
repeat_one 1f502, play 25b6, fast_forward 23e9, next_track 23ed, play_pause 23ef,
reverse 25c0, rewind 23ea, previous_track 23ee, pause 23f8, stop_button 23f9, record 23fa,
eject 23cf, cinema 1f3a6, dim 1f505, bright 1f506, signal_strength 1f4f6,
vibration_mode 1f4f3, phone_off 1f4f4, female 2640, male 2642, infinity 267e, recycle 267b,
fleur_de_lis 269c, trident 1f531, name_badge 1f4db, beginner 1f530, o 2b55,
check 2705 white_check_mark, checkbox 2611 ballot_box_with_check,
check_mark 2714 heavy_check_mark, x 274c cross_mark, plus 2795 heavy_plus_sign,
minus 2796 heavy_minus_sign, division 2797, curly_loop 27b0, double_curly_loop 27bf,
part_alternation_mark 303d, eight_spoked_asterisk 2733, eight_pointed_star 2734,
sparkle 2747, bangbang 203c double_exclamation, interrobang 2049, question 2753,
grey_question 2754, grey_exclamation 2755, exclamation 2757 heavy_exclamation_mark,
wavy_dash 3030, copyright 00a9, registered 00ae, tm 2122, hash 0023-20e3,
asterisk 002a-20e3, zero 0030-20e3, one 0031-20e3, two 0032-20e3, three 0033-20e3,
four 0034-20e3, five 0035-20e3, six 0036-20e3, seven 0037-20e3, eight 0038-20e3,
nine 0039-20e3, ten 1f51f, capital_abcd 1f520, abcd 1f521, 1234 1f522, symbols 1f523,
abc 1f524, a 1f170, ab 1f18e, b 1f171, cl 1f191, cool 1f192, free 1f193, id 1f194, new 1f195,
ng 1f196, sos 1f198, up_button 1f199, vs 1f19a, info 2139 information_source, m 24c2,
red_circle 1f534, orange_circle 1f7e0, yellow_circle 1f7e1, green_circle 1f7e2,
blue_circle 1f535, purple_circle 1f7e3, brown_circle 1f7e4, black_circle 26ab,
white_circle 26aa, red_square 1f7e5, orange_square 1f7e7, yellow_square 1f7e8,
green_square 1f7e9, blue_square 1f7e6, purple_square 1f7ea, brown_square 1f7eb,
black_large_square 2b1b, white_large_square 2b1c, large_orange_diamond 1f536,
large_blue_diamond 1f537, small_orange_diamond 1f538, small_blue_diamond 1f539,
red_triangle_up 1f53a, red_triangle_down 1f53b, diamond_with_a_dot 1f4a0,
radio_button 1f518, white_flower 1f4ae, checkered_flag 1f3c1 finish,
triangular_flag 1f6a9, crossed_flags 1f38c, black_flag 1f3f4, white_flag 1f3f3,
rainbow_flag 1f3f3-200d-1f308 pride, pirate_flag 1f3f4-200d-2620
`;

const nameToCode = new Map<string, string>();
const codeToName = new Map<string, string>();

for (const entry of TABLE.split(',')) {
  const [name, code, ...aliases] = entry.trim().split(/\s+/);
  if (!name || !code) continue;
  // A repeated name or code is a mistake in the table above; fail at load, not at render.
  if (codeToName.has(code)) throw new Error(`emoji code ${code} listed twice`);
  codeToName.set(code, name);
  for (const n of [name, ...aliases]) {
    if (nameToCode.has(n)) throw new Error(`emoji name ${n} listed twice`);
    nameToCode.set(n, code);
  }
}

/** The emoji code (e.g. "1f642") for a built-in emoji name or alias, if known. */
export function emojiCodeForName(name: string): string | undefined {
  return nameToCode.get(name);
}

export function isKnownEmojiName(name: string): boolean {
  return nameToCode.has(name);
}

/** The canonical name for an emoji code, as used when rendering a pasted Unicode emoji. */
export function emojiNameForCode(code: string): string | undefined {
  return codeToName.get(code);
}

/** Every built-in name and alias with its code (for tests and emoji listings). */
export function builtinEmojiEntries(): Array<[name: string, code: string]> {
  return [...nameToCode.entries()];
}

/** The reference's emoji code for a Unicode emoji sequence: code points in hex, minus U+FE0F. */
export function emojiCodeForText(text: string): string {
  const points: string[] = [];
  for (const ch of text) {
    const cp = ch.codePointAt(0) ?? 0;
    if (cp !== 0xfe0f) points.push(cp.toString(16).padStart(4, '0'));
  }
  return points.join('-');
}
