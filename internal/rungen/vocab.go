package rungen

import (
	"math/rand/v2"
	"strings"
)

// Vocabulary is the word list of a generated run, most frequent first: words are
// drawn from it with a Zipf distribution over the rank. English function words lead,
// words of the agents' domain (deploys, bookings, ...) are spread from frequent to rare,
// and the rest are generated pseudo-words, so a run has a long tail of rare terms as
// real runs do.
type Vocabulary struct {
	Words []string
	// EnglishWords is how many of the first Words are common English words.
	EnglishWords int
	// Domain holds the rank (index in Words) of each domain word.
	Domain map[string]int
}

// NewVocabulary builds the vocabulary of a seed: the same seed and size give the same
// words in the same order.
func NewVocabulary(seed int64, generated int) *Vocabulary {
	if generated < 0 {
		generated = 0
	}
	r := rand.New(rand.NewPCG(uint64(seed), 0x766f636162756c61)) // "vocabula"
	seen := make(map[string]bool, len(englishWords)+len(domainWords)+generated)
	for _, w := range englishWords {
		seen[w] = true
	}
	for _, w := range domainWords {
		seen[w] = true
	}
	gen := make([]string, 0, generated)
	var sb strings.Builder
	for len(gen) < generated {
		sb.Reset()
		syllables := 2 + r.IntN(3)
		for i := 0; i < syllables; i++ {
			sb.WriteString(onsets[r.IntN(len(onsets))])
			sb.WriteString(vowels[r.IntN(len(vowels))])
		}
		if r.IntN(3) == 0 {
			sb.WriteString(codas[r.IntN(len(codas))])
		}
		w := sb.String()
		if seen[w] {
			continue
		}
		seen[w] = true
		gen = append(gen, w)
	}

	v := &Vocabulary{EnglishWords: len(englishWords), Domain: make(map[string]int, len(domainWords))}
	words := make([]string, 0, len(englishWords)+len(domainWords)+len(gen))
	words = append(words, englishWords...)
	// Domain word i goes to rank about len(englishWords) + 2·i², so that the first
	// ones are frequent and the last ones rare (rank ~45000 with the default size).
	next := 0
	for i, w := range domainWords {
		target := len(englishWords) + 2*i*i
		for len(words) < target && next < len(gen) {
			words = append(words, gen[next])
			next++
		}
		v.Domain[w] = len(words)
		words = append(words, w)
	}
	words = append(words, gen[next:]...)
	v.Words = words
	return v
}

// pick returns n words of rank in [from, to), spread evenly.
func (v *Vocabulary) pick(from, to, n int) []string {
	if to > len(v.Words) {
		to = len(v.Words)
	}
	if from >= to || n <= 0 {
		return nil
	}
	out := make([]string, 0, n)
	step := (to - from) / n
	if step == 0 {
		step = 1
	}
	for i := from; i < to && len(out) < n; i += step {
		out = append(out, v.Words[i])
	}
	return out
}

var englishWords = strings.Fields(`the of and to a in is it that for was on with as be at by this
had not are but from or have an they which one you were her all she there would their we him
been has when who will more no if out so said what up its about into than them can only other
new some could time these two may then do first any my now such like our over man me even most
made after also did many before must through back years where much your way well down should
because each just those people how too little state good very make world still own see men work
long get here between both life being under never day same another know while last might us
great old year off come since against go came right used take three`)

var domainWords = strings.Fields(`deploy database migration service error hotel booking test
request user file build config cluster release rollback staging production query index
schema table column billing invoice payment customer flight budget offsite venue room
timeout retry latency cache queue worker pod container image registry secret token
certificate endpoint gateway proxy socket connection session login password account email
notification webhook scheduler cron backup restore snapshot replica shard partition
transaction commit branch merge review pipeline artifact dependency package module compiler
linter benchmark profile memory heap goroutine thread mutex deadlock panic exception stack
trace metric dashboard alert incident postmortem runbook oncall ticket sprint roadmap
estimate receipt currency exchange refund discount coupon checkout cart inventory warehouse
shipment courier passport visa itinerary luggage airport terminal boarding taxi restaurant
museum ticketing breakfast dinner lunch reservation cancellation`)

var (
	onsets = strings.Fields("b c d f g h j k l m n p r s t v w z br kr pl st tr gr fl sk sh ch th")
	vowels = strings.Fields("a e i o u a e i o ai ou ea io")
	codas  = strings.Fields("n r s t l m x nd rt st ck")
)

// nonASCII words show up rarely in messages and notes; the emoji are outside the BMP
// so that UTF-16 surrogate pairs appear.
var nonASCII = strings.Fields("café crème naïve Zürich São résumé Ελλάδα Москва 北京 東京 — 😀 🚀 ✅ über façade")
