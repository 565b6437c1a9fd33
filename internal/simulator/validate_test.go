/*
Copyright 2026 The video-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package simulator

import (
	"encoding/json"
	"strings"
	"testing"
)

// decode parses JSON the way the server does (numbers as json.Number).
func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return m
}

const okScene = `{"story":"Hello there."}`

// The "common causes of 400" of "Errors", the field rules of "Resources and their fields" and
// the "Limits": each request must be rejected on the named field.
func TestValidateRequestRejections(t *testing.T) {
	long := func(n int) string { return strings.Repeat("a", n) }
	tests := []struct {
		name, body, field string
	}{
		{"missing videoName", `{"scenes":[` + okScene + `]}`, "videoName"},
		{"videoName too long", `{"videoName":"` + long(151) + `","scenes":[` + okScene + `]}`, "videoName"},
		{"videoName charset", `{"videoName":"a/b","scenes":[` + okScene + `]}`, "videoName"},
		{"missing scenes without templateId", `{"videoName":"v"}`, "scenes"},
		{"empty scenes", `{"videoName":"v","scenes":[]}`, "scenes"},
		{"brandId and brandName", `{"videoName":"v","brandId":"a","brandName":"b","scenes":[` + okScene + `]}`, "brandName"},
		{"smart layout id and name", `{"videoName":"v","smartLayoutId":"a","smartLayoutName":"b","scenes":[` + okScene + `]}`, "smartLayoutName"},
		{"unsupported language", `{"videoName":"v","language":"xx","scenes":[` + okScene + `]}`, "language"},
		{"width without height", `{"videoName":"v","videoWidth":100,"scenes":[` + okScene + `]}`, "videoHeight"},
		{"aspect ratio", `{"videoName":"v","aspectRatio":"2:1","scenes":[` + okScene + `]}`, "aspectRatio"},
		{"webhook too long", `{"videoName":"v","webhook":"https://x/` + long(500) + `","scenes":[` + okScene + `]}`, "webhook"},
		{"webhook not a URI", `{"videoName":"v","webhook":"not a uri","scenes":[` + okScene + `]}`, "webhook"},
		{"variables without templateId", `{"videoName":"v","variables":{"a":"b"},"scenes":[` + okScene + `]}`, "variables"},
		{"storyboardVersion", `{"videoName":"v","storyboardVersion":"v2","scenes":[` + okScene + `]}`, "storyboardVersion"},
		{"six destinations", `{"videoName":"v","destinations":[{"type":"videohost"},{"type":"videohost"},{"type":"videohost"},{"type":"videohost"},{"type":"videohost"},{"type":"videohost"}],"scenes":[` + okScene + `]}`, "destinations"},
		{"objectstore without bucket", `{"videoName":"v","destinations":[{"type":"objectstore","region":"r","key":"k"}],"scenes":[` + okScene + `]}`, "destinations[0].bucket"},
		{"aiVoices and externalVoice", `{"videoName":"v","voiceOver":{"enabled":true,"aiVoices":[{"speaker":"Amy"}],"externalVoice":{"voiceUrl":"https://x/v.mp3"}},"scenes":[` + okScene + `]}`, "voiceOver.externalVoice"},
		{"voiceOver without enabled", `{"videoName":"v","voiceOver":{"aiVoices":[{"speaker":"Amy"}]},"scenes":[` + okScene + `]}`, "voiceOver.enabled"},
		{"speed out of range", `{"videoName":"v","voiceOver":{"enabled":true,"aiVoices":[{"speaker":"Amy","speed":201}]},"scenes":[` + okScene + `]}`, "voiceOver.aiVoices[0].speed"},
		{"eleven voices", `{"videoName":"v","voiceOver":{"enabled":true,"aiVoices":[` + strings.Repeat(`{"speaker":"Amy"},`, 10) + `{"speaker":"Amy"}]},"scenes":[` + okScene + `]}`, "voiceOver.aiVoices"},
		{"autoMusic and musicUrl", `{"videoName":"v","backgroundMusic":{"enabled":true,"autoMusic":true,"musicUrl":"https://x/m.mp3"},"scenes":[` + okScene + `]}`, "backgroundMusic.musicUrl"},
		{"music volume", `{"videoName":"v","backgroundMusic":{"enabled":true,"volume":1.5},"scenes":[` + okScene + `]}`, "backgroundMusic.volume"},
		{"music clip without end", `{"videoName":"v","backgroundMusic":{"enabled":true,"clips":[{"start":1}]},"scenes":[` + okScene + `]}`, "backgroundMusic.clips[0].end"},
		{"avatar without voice-over", `{"videoName":"v","avatar":{"avatarId":"a"},"scenes":[` + okScene + `]}`, "avatar"},
		{"logo without url", `{"videoName":"v","logo":{"position":"top-left"},"scenes":[` + okScene + `]}`, "logo.url"},
		{"two content sources", `{"videoName":"v","scenes":[{"story":"a","blogUrl":"https://x/b"}]}`, "scenes[0]"},
		{"no content source", `{"videoName":"v","scenes":[{"hideSubtitles":true}]}`, "scenes[0]"},
		{"story too long", `{"videoName":"v","scenes":[{"story":"` + long(15001) + `"}]}`, "scenes[0].story"},
		{"audio without audioLanguage", `{"videoName":"v","scenes":[{"audioUrl":"https://x/a.mp3","transcript":[{"words":[{"word":"a","start_time":0,"end_time":1}]}]}]}`, "scenes[0].audioLanguage"},
		{"video without transcript", `{"videoName":"v","scenes":[{"videoUrl":"https://x/a.mp4","audioLanguage":"en-US"}]}`, "scenes[0].transcript"},
		{"word end before start", `{"videoName":"v","scenes":[{"audioUrl":"https://x/a.mp3","audioLanguage":"en-US","transcript":[{"words":[{"word":"a","start_time":2,"end_time":1}]}]}]}`, "scenes[0].transcript[0].words[0].end_time"},
		{"maxSubtitleLines 5", `{"videoName":"v","scenes":[{"story":"a","maxSubtitleLines":5}]}`, "scenes[0].maxSubtitleLines"},
		{"maxSubtitleLines with smart layout", `{"videoName":"v","smartLayoutName":"l","scenes":[{"story":"a","maxSubtitleLines":2}]}`, "scenes[0].maxSubtitleLines"},
		{"useSpeakerNotes without pptUrl", `{"videoName":"v","scenes":[{"story":"a","useSpeakerNotes":true}]}`, "scenes[0].useSpeakerNotes"},
		{"caption without story", `{"videoName":"v","scenes":[{"blogUrl":"https://x/b","caption":"c"}]}`, "scenes[0].caption"},
		{"caption too long", `{"videoName":"v","scenes":[{"story":"a","caption":"` + long(3001) + `"}]}`, "scenes[0].caption"},
		{"blogUrl too long", `{"videoName":"v","scenes":[{"blogUrl":"https://x/` + long(3000) + `"}]}`, "scenes[0].blogUrl"},
		{"brief prompt empty", `{"videoName":"v","scenes":[{"brief":{"prompt":""}}]}`, "scenes[0].brief.prompt"},
		{"brief duration 601", `{"videoName":"v","scenes":[{"storyCoPilot":{"prompt":"p","duration":601}}]}`, "scenes[0].storyCoPilot.duration"},
		{"two backgrounds", `{"videoName":"v","scenes":[{"story":"a","background":{"visualUrl":"https://x/i.png","color":"#fff"}}]}`, "scenes[0].background"},
		{"aiVisual without type", `{"videoName":"v","scenes":[{"story":"a","background":{"aiVisual":{"model":"flux-schnell"}}}]}`, "scenes[0].background.type"},
		{"aiVisual prompt too long", `{"videoName":"v","scenes":[{"story":"a","background":{"type":"image","aiVisual":{"model":"flux-schnell","prompt":"` + long(501) + `"}}}]}`, "scenes[0].background.aiVisual.prompt"},
		{"video model for image", `{"videoName":"v","scenes":[{"story":"a","background":{"type":"image","aiVisual":{"model":"veo3.1"}}}]}`, "scenes[0].background.aiVisual.model"},
		{"three reference images", `{"videoName":"v","scenes":[{"story":"a","background":{"type":"video","aiVisual":{"model":"veo3.1","referenceImageUrls":["https://x/1","https://x/2","https://x/3"]}}}]}`, "scenes[0].background.aiVisual.referenceImageUrls"},
		{"zoomAndPan with kenBurns", `{"videoName":"v","scenes":[{"story":"a","background":{"visualUrl":"https://x/i.png","settings":{"zoomAndPan":true,"kenBurnsEffect":true}}}]}`, "scenes[0].background.settings.kenBurnsEffect"},
		{"eleven keywords", `{"videoName":"v","scenes":[{"story":"a","background":{"searchFilter":{"keywords":["aa","aa","aa","aa","aa","aa","aa","aa","aa","aa","aa"]}}}]}`, "scenes[0].background.searchFilter.keywords"},
		{"keyword too short", `{"videoName":"v","scenes":[{"story":"a","background":{"searchFilter":{"keywords":["a"]}}}]}`, "scenes[0].background.searchFilter.keywords[0]"},
		{"101 corpus items", `{"videoName":"v","scenes":[{"story":"a","backgroundCorpus":[` + strings.TrimSuffix(strings.Repeat(`{"visualUrl":"https://x/i","type":"image"},`, 101), ",") + `]}]}`, "scenes[0].backgroundCorpus"},
		{"21 elements", `{"videoName":"v","scenes":[{"story":"a","elements":[` + strings.TrimSuffix(strings.Repeat(`{"type":"text","text":"t"},`, 21), ",") + `]}]}`, "scenes[0].elements"},
		{"element text too long", `{"videoName":"v","scenes":[{"story":"a","elements":[{"type":"text","text":"` + long(2001) + `"}]}]}`, "scenes[0].elements[0].text"},
		{"element position and top", `{"videoName":"v","scenes":[{"story":"a","elements":[{"type":"text","text":"t","position":"center","top":"10%"}]}]}`, "scenes[0].elements[0].position"},
		{"media element two sources", `{"videoName":"v","scenes":[{"story":"a","elements":[{"type":"image","visualUrl":"https://x/i","searchFilter":{"query":"cats"}}]}]}`, "scenes[0].elements[0]"},
		{"element search query short", `{"videoName":"v","scenes":[{"story":"a","elements":[{"type":"video","searchFilter":{"query":"c"}}]}]}`, "scenes[0].elements[0].searchFilter.query"},
		{"shape without name", `{"videoName":"v","scenes":[{"story":"a","elements":[{"type":"shape"}]}]}`, "scenes[0].elements[0].name"},
		{"three animations", `{"videoName":"v","subtitleStyle":{"animations":[{"name":"fade","type":"entry","speed":"slow"},{"name":"fade","type":"exit","speed":"slow"},{"name":"wipe","type":"exit","speed":"slow"}]},"scenes":[` + okScene + `]}`, "subtitleStyle.animations"},
		{"two entry animations", `{"videoName":"v","subtitleStyle":{"animations":[{"name":"fade","type":"entry","speed":"slow"},{"name":"wipe","type":"entry","speed":"slow"}]},"scenes":[` + okScene + `]}`, "subtitleStyle.animations[1].type"},
		{"custom speed without value", `{"videoName":"v","subtitleStyle":{"animations":[{"name":"fade","type":"entry","speed":"custom"}]},"scenes":[` + okScene + `]}`, "subtitleStyle.animations[0].customSpeedValue"},
		{"futureWords with wipe", `{"videoName":"v","subtitleStyle":{"animations":[{"name":"wipe","type":"entry","speed":"slow","futureWords":"hidden"}]},"scenes":[` + okScene + `]}`, "subtitleStyle.animations[0].futureWords"},
		{"fontUrl without fontFamily", `{"videoName":"v","subtitleStyle":{"fontUrl":"https://x/f.ttf"},"scenes":[` + okScene + `]}`, "subtitleStyle.fontFamily"},
		{"scene avatar id", `{"videoName":"v","scenes":[{"story":"a","avatar":{"avatarId":"x"}}]}`, "scenes[0].avatar.avatarId"},
		{"templateOverride without templateId", `{"videoName":"v","scenes":[{"story":"a","templateOverride":{}}]}`, "scenes[0].templateOverride"},
		{"mediaRepurposeSettings on story", `{"videoName":"v","scenes":[{"story":"a","mediaRepurposeSettings":{"highlightLength":10}}]}`, "scenes[0].mediaRepurposeSettings"},
		{"slide model", `{"videoName":"v","scenes":[{"pptUrl":"https://x/d.pptx","pptSlideAnimation":{"enabled":true,"model":"sora"}}]}`, "scenes[0].pptSlideAnimation.model"},
		{"wrong type", `{"videoName":42,"scenes":[` + okScene + `]}`, "videoName"},
		// "AI storyboard rules" 4: text-to-video only, rejected with an explicit message.
		{"AI storyboard with templateId", `{"videoName":"v","templateId":"t","aiStoryboard":{"enabled":true}}`, "templateId"},
		{"AI storyboard with smart layout", `{"videoName":"v","smartLayoutId":"l","aiStoryboard":{"enabled":true},"scenes":[` + okScene + `]}`, "smartLayoutId"},
		{"AI storyboard with 4:5", `{"videoName":"v","aspectRatio":"4:5","aiStoryboard":{"enabled":true},"scenes":[` + okScene + `]}`, "aspectRatio"},
		{"AI storyboard with pptUrl", `{"videoName":"v","aiStoryboard":{"enabled":true},"scenes":[{"pptUrl":"https://x/d.pptx"}]}`, "scenes[0].pptUrl"},
		{"AI storyboard brief with two scenes", `{"videoName":"v","aiStoryboard":{"enabled":true},"scenes":[{"brief":{"prompt":"p"}},` + okScene + `]}`, "scenes"},
		// Value formats and the readings shared with the CRD.
		{"avatar width over 100%", `{"videoName":"v","voiceOver":{"enabled":true},"avatar":{"avatarId":"a","width":"999%"},"scenes":[` + okScene + `]}`, "avatar.width"},
		{"logo width not a percentage", `{"videoName":"v","logo":{"url":"https://x/l.png","width":"wide"},"scenes":[` + okScene + `]}`, "logo.width"},
		{"element top not a percentage", `{"videoName":"v","scenes":[{"story":"a","elements":[{"type":"text","text":"t","top":"north"}]}]}`, "scenes[0].elements[0].top"},
		{"stability not a percentage", `{"videoName":"v","voiceOver":{"enabled":true,"aiVoices":[{"speaker":"Amy","premiumVoiceSettings":{"stability":"steady"}}]},"scenes":[` + okScene + `]}`, "voiceOver.aiVoices[0].premiumVoiceSettings.stability"},
		{"background colour name", `{"videoName":"v","scenes":[{"story":"a","background":{"color":"blue"}}]}`, "scenes[0].background.color"},
		{"webhook a relative path", `{"videoName":"v","webhook":"/hook","scenes":[` + okScene + `]}`, "webhook"},
		{"sourceless scene without templateOverride", `{"videoName":"v","templateId":"t","scenes":[{"hideSubtitles":true}]}`, "scenes[0]"},
		{"scene avatarId", `{"videoName":"v","scenes":[{"story":"a","avatar":{"avatarId":"b"}}]}`, "scenes[0].avatar.avatarId"},
		{"template layer style fontUrl without fontFamily", `{"videoName":"v","templateId":"t","scenes":[{"templateOverride":{"layers":[[{"style":{"fontUrl":"https://x/f.ttf"}}]]}}]}`, "scenes[0].templateOverride.layers[0][0].style.fontFamily"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := validateRequest(decode(t, tt.body))
			for _, e := range errs {
				if e.Name == tt.field && e.Errors != "" {
					return
				}
			}
			t.Errorf("no error on %s; got %+v", tt.field, errs)
		})
	}
}

func TestValidateRequestAccepts(t *testing.T) {
	for name, body := range map[string]string{
		"minimal":  `{"videoName":"My video_1-a","scenes":[` + okScene + `]}`,
		"template": `{"videoName":"v","templateId":"t","variables":{"name":"Ann"},"scenes":[{"templateOverride":{"scenePosition":1}}]}`,
		"full": `{"videoName":"Full","videoWidth":1280,"videoHeight":720,"aspectRatio":"16:9","language":"fr","saveProject":true,
			"webhook":"https://hooks.example.com/x","webhookInput":{"a":1},"brandName":"Acme","storyboardVersion":"v3",
			"destinations":[{"type":"objectstore","bucket":"b","region":"r","key":"k"},{"type":"videohost","privacy":{"view":"unlisted"}}],
			"voiceOver":{"enabled":true,"aiVoices":[{"speaker":"Amy","speed":120,"amplificationLevel":-0.5,"premiumVoiceSettings":{"modelId":"premium_v3","stability":"50%"}}]},
			"backgroundMusic":{"enabled":true,"autoMusic":true,"volume":0.3,"clips":[{"start":0,"end":10}]},
			"logo":{"url":"https://x/l.png","position":"top-right","width":"10%"},
			"avatar":{"avatarId":"av","position":"bottom-right","width":"20%","borderRadius":"50"},
			"subtitleStyle":{"fontUrl":"https://x/f.ttf","fontFamily":"F","fontSize":24,"animations":[{"name":"fade","type":"entry","speed":"custom","customSpeedValue":1,"futureWords":"subtle"},{"name":"wipe","type":"exit","speed":"fast"}]},
			"scenes":[
				{"story":"One. Two.","createSceneOnEndOfSentence":true,"maxSubtitleLines":2,"caption":"c","captionLanguage":"fr",
				 "background":{"type":"video","aiVisual":{"model":"veo3.1","videoDuration":"6s","referenceImageUrls":["https://x/r.png"]},"colorOverlay":{"color":"#000","opacity":0.4}},
				 "elements":[{"type":"text","text":"Hi","textVariant":"heading","position":"center"},{"type":"image","searchFilter":{"query":"cats"}},{"type":"shape","name":"rectangle","borderRadius":4}]},
				{"audioUrl":"https://x/a.mp3","audioLanguage":"en-GB","transcript":[{"words":[{"word":"hi","start_time":0,"end_time":0.5}]}],"mediaRepurposeSettings":{"highlightLength":30}},
				{"pptUrl":"https://x/d.pptx","useSpeakerNotes":true,"pptSlideAnimation":{"enabled":true,"model":"pixverse6","slides":[1,3]}},
				{"brief":{"prompt":"p","videoGoal":"Tutorial","duration":60,"platform":"YouTube","tone":"casual"}}
			]}`,
		"ai script mode": `{"videoName":"v","aiStoryboard":{"enabled":true},"scenes":[{"story":"One. Two."},{"blogUrl":"https://x/b"}]}`,
		"ai brief mode":  `{"videoName":"v","aiStoryboard":{"enabled":true},"scenes":[{"storyCoPilot":{"prompt":"p","videoType":"Product"}}]}`,
		"classic storyboard mixing a storyCoPilot scene with stories": `{"videoName":"v","scenes":[` + okScene + `,{"storyCoPilot":{"prompt":"p"}},` + okScene + `]}`,
		"autoMusic false with musicUrl":                               `{"videoName":"v","backgroundMusic":{"enabled":true,"autoMusic":false,"musicUrl":"https://x/m.mp3"},"scenes":[` + okScene + `]}`,
		"kenBurnsEffect false on a video with zoomAndPan":             `{"videoName":"v","scenes":[{"story":"a","background":{"visualUrl":"https://x/v.mp4","type":"video","settings":{"zoomAndPan":true,"kenBurnsEffect":false}}}]}`,
		"colours and percentages":                                     `{"videoName":"v","subtitleStyle":{"color":"rgba(255, 255, 255, 0.5)"},"scenes":[{"story":"a","background":{"color":"rgba(1,2,3,1)","colorOverlay":{"color":"rgb(0, 0, 0)"}},"elements":[{"type":"text","text":"t","top":"12.5%","left":"0","width":"100%"}]}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			if errs := validateRequest(decode(t, body)); len(errs) > 0 {
				t.Errorf("unexpected errors %+v", errs)
			}
		})
	}
}

func TestIsPremiumVoiceID(t *testing.T) {
	for id, want := range map[string]bool{
		"21m00Tcm4TlvDq8ikWAM": true,
		"AZnzlk1XvdvUeBnXmlld": true,
		"Matthew":              false,
		"abcdefghijklmnopqrst": false, // no digit
		"21m00Tcm4TlvDq8ikWA":  false, // 19
		"21m00Tcm4TlvDq8ikW-M": false,
	} {
		if got := IsPremiumVoiceID(id); got != want {
			t.Errorf("IsPremiumVoiceID(%q) = %v", id, got)
		}
	}
}
