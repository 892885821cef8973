package main

import (
	"fmt"
	"time"
)

// startupPhase spawns nexus startup-runs times per language and times
// spawn → initialize reply, spawn → first add_<lang> answered, and the exit
// after stdin closes (once every pool has answered, so that the exit is
// not racing a pool still starting).
func (b *bench) startupPhase() {
	var inits, exits []float64
	first := map[string][]float64{}
	for run := range b.cfg.startupRuns {
		for _, lang := range b.cfg.langs {
			progress("start-up: run %d, first call to add_%s", run+1, lang)
			i, f, e, err := b.startupOnce(fmt.Sprintf("startup-%s-%d", lang, run+1), lang)
			if err != nil {
				b.fail("start-up (%s): %v", lang, err)
				return
			}
			inits = append(inits, i)
			first[lang] = append(first[lang], f)
			exits = append(exits, e)
		}
	}
	n := fmt.Sprintf("median of %d spawns", len(inits))
	b.add(row{section: secStartup, what: "spawn → initialize reply", value: median(inits), unit: "ms", floor: none,
		details: n + "; pools start in the background, so this is nexus alone"})
	for _, lang := range b.cfg.langs {
		fl, ok := b.floors.start[lang]
		if !ok {
			fl = none
		}
		v := median(first[lang])
		b.add(row{section: secStartup, lang: lang, what: "spawn → first add_" + lang + " answered", value: v, unit: "ms",
			floor: fl, vs: diff(v, fl, "ms"), details: fmt.Sprintf("median of %d; floor: %s", len(first[lang]), startFloorName(lang))})
	}
	b.add(row{section: secStartup, what: "exit after stdin EOF", value: median(exits), unit: "ms", floor: none,
		details: n + "; stdin closed to nexus exited, every pool up"})
}

func startFloorName(lang string) string {
	switch lang {
	case "py":
		return "python3 -c pass"
	case "r":
		return "Rscript -e 0"
	}
	return "the C++ floor binary starting and exiting"
}

// startupOnce returns the three times of one spawn, in ms.
func (b *bench) startupOnce(run, lang string) (initMs, firstMs, exitMs float64, err error) {
	t0 := time.Now()
	s, err := b.startSession(run)
	if err != nil {
		return 0, 0, 0, err
	}
	defer s.stop(30 * time.Second)
	if err := s.initialize(); err != nil {
		return 0, 0, 0, err
	}
	initMs = ms(time.Since(t0))
	if err := s.write([]byte(initializedLine)); err != nil {
		return 0, 0, 0, s.failure("notifications/initialized", err)
	}
	line, err := s.call("add_"+lang, `{"a":1,"b":2}`)
	if err != nil {
		return 0, 0, 0, err
	}
	firstMs = ms(time.Since(t0))
	if !textIs(line, "3") {
		return 0, 0, 0, fmt.Errorf("add_%s(1, 2): WRONG answer %.300s", lang, line)
	}
	for _, other := range b.cfg.langs {
		if _, err := s.call("add_"+other, `{"a":1,"b":2}`); err != nil {
			return 0, 0, 0, err
		}
	}
	tc := time.Now()
	if err := s.stop(30 * time.Second); err != nil {
		return 0, 0, 0, s.failure("exit", err)
	}
	return initMs, firstMs, ms(s.exitAt.Sub(tc)), nil
}
