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

package controller

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/simulator"
)

// The objects below are written as YAML flow mappings with the service's JSON names, so each entry
// reads like the request a user would send. Entry descriptions start with the section of the
// interface document the rule comes from.

// apiObject builds a VideoStoryboard or VideoRender from the YAML of its spec; an empty spec leaves
// the field out.
func apiObject(kind, spec string) *unstructured.Unstructured {
	doc := fmt.Sprintf("apiVersion: %s\nkind: %s\nmetadata: {generateName: test-}\n", videov1alpha1.GroupVersion, kind)
	if spec != "" {
		doc += "spec: " + spec + "\n"
	}
	data, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		panic(fmt.Sprintf("test object is not YAML: %v\n%s", err, doc))
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		panic(fmt.Sprintf("test object does not decode: %v\n%s", err, doc))
	}
	return u
}

// vsb is a VideoStoryboard: its spec is the request itself, so paths start at spec.
func vsb(spec string) *unstructured.Unstructured { return apiObject("VideoStoryboard", spec) }

// vr is a VideoRender: an inline request sits at spec.storyboard.
func vr(spec string) *unstructured.Unstructured { return apiObject("VideoRender", spec) }

// storyReq is a valid request with one story scene, plus fields.
func storyReq(fields string) string {
	return "{videoName: test, scenes: [{story: Hello}], " + fields + "}"
}

// sceneReq is a request whose only scene has the given fields.
func sceneReq(fields string) string { return "{videoName: test, scenes: [{" + fields + "}]}" }

// storySceneReq is a request whose only scene is a story with more fields.
func storySceneReq(fields string) string { return sceneReq("story: Hello, " + fields) }

// elementReq is a request whose only scene is a story with one element.
func elementReq(fields string) string { return storySceneReq("elements: [{" + fields + "}]") }

// backgroundReq is a request whose only scene is a story with the given background.
func backgroundReq(fields string) string { return storySceneReq("background: {" + fields + "}") }

// aiVisualReq is a request whose only scene has an AI visual background of the given
// type and fields.
func aiVisualReq(typ, fields string) string {
	return backgroundReq("type: " + typ + ", aiVisual: {" + fields + "}")
}

// templateReq is a template request whose only scene overrides the template.
func templateReq(override string) string {
	return "{videoName: test, templateId: tpl-1, scenes: [{templateOverride: {" + override + "}}]}"
}

// aiReq is a request in AI storyboard mode with the given fields.
func aiReq(fields string) string {
	return "{videoName: test, aiStoryboard: {enabled: true}, " + fields + "}"
}

// repeatItems joins count copies of item with commas, to build lists one item over their bound.
func repeatItems(item string, count int) string {
	return strings.TrimSuffix(strings.Repeat(item+", ", count), ", ")
}

// variables is the YAML of n template variables v0: x, v1: x, ...
func variables(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf("v%d: x", i)
	}
	return strings.Join(items, ", ")
}

// longString is a plain string of n characters.
func longString(n int) string { return strings.Repeat("a", n) }

// longURL is a URL of exactly n characters.
func longURL(n int) string { return "https://example.com/" + longString(n-len("https://example.com/")) }

// requestOf returns the JSON of the StoryboardRequest obj would send, or nil when it sends none
// (a VideoRender of a project or a stored storyboard, or an object without a spec).
func requestOf(obj *unstructured.Unstructured) []byte {
	GinkgoHelper()
	var req map[string]any
	switch obj.GetKind() {
	case "VideoStoryboard":
		req, _, _ = unstructured.NestedMap(obj.Object, "spec")
		delete(req, "apiKeySecretRef")
	case "VideoRender":
		req, _, _ = unstructured.NestedMap(obj.Object, "spec", "storyboard")
	}
	if req == nil {
		return nil
	}
	body, err := json.Marshal(req)
	Expect(err).NotTo(HaveOccurred())
	return body
}

// operatorPresubmit runs the controller's pre-submit check on the request of an object admission
// accepted.
func operatorPresubmit(obj *unstructured.Unstructured) field.ErrorList {
	GinkgoHelper()
	body := requestOf(obj)
	if body == nil {
		return nil
	}
	var req videov1alpha1.StoryboardRequest
	Expect(json.Unmarshal(body, &req)).To(Succeed())
	errs, err := presubmitErrors(ctx, &req, field.NewPath("spec"))
	Expect(err).NotTo(HaveOccurred())
	return errs
}

// expectSimulatorAgrees asserts that the simulator, an independent reading of the interface
// document, accepts obj's request exactly when the operator does (admission, then the pre-submit
// check). Objects that send no request have nothing to compare.
func expectSimulatorAgrees(obj *unstructured.Unstructured, operatorAccepts bool) {
	GinkgoHelper()
	body := requestOf(obj)
	if body == nil {
		return
	}
	errs, err := simulator.ValidateStoryboardRequest(body)
	Expect(err).NotTo(HaveOccurred())
	if operatorAccepts {
		Expect(errs).To(BeEmpty(), "the operator accepts this request, the simulator refuses it:\n%s", body)
	} else {
		Expect(errs).NotTo(BeEmpty(), "the operator refuses this request, the simulator accepts it:\n%s", body)
	}
}

// expectAdmissionInvalid asserts the API server refused the object as Invalid, with a cause at
// fieldPath whose message contains message: a cause of the CRD's schema names the field in Field;
// the cause of a scene's rule, refused by its admission policy (config/policies), names it at the
// start of its message ("spec.scenes[0].caption: caption requires story").
func expectAdmissionInvalid(err error, fieldPath, message string) {
	GinkgoHelper()
	Expect(err).To(HaveOccurred(), "the object was accepted")
	Expect(apierrors.IsInvalid(err)).To(BeTrue(), "expected Invalid, got %v", err)
	var status apierrors.APIStatus
	Expect(errors.As(err, &status)).To(BeTrue())
	Expect(status.Status().Details).NotTo(BeNil())
	Expect(status.Status().Details.Causes).To(ContainElement(SatisfyAny(
		SatisfyAll(HaveField("Field", fieldPath), HaveField("Message", ContainSubstring(message))),
		SatisfyAll(HaveField("Field", ""), HaveField("Message", SatisfyAll(ContainSubstring(": "+fieldPath+": "), ContainSubstring(message)))),
	)), "full error: %v", err)
}

const (
	msgRequired = "Required value"
	msgTooLong  = "Too long"
	msgTooShort = "should be at least"
	msgTooMany  = "Too many"
	msgTooFew   = "should have at least"
	msgNotEnum  = "Unsupported value"
	msgTooSmall = "should be greater than or equal to"
	msgTooLarge = "should be less than or equal to"
	msgNoMatch  = "should match"
	msgNotURI   = "must be of type uri"
)

var _ = Describe("API validation", func() {
	var namespace string
	BeforeEach(func() { namespace = newNamespace() })

	DescribeTable("rejects an invalid request at admission",
		func(obj *unstructured.Unstructured, field, message string) {
			obj.SetNamespace(namespace)
			expectAdmissionInvalid(k8sClient.Create(ctx, obj), field, message)
			expectSimulatorAgrees(obj, false)
		},

		// StoryboardRequest: required fields, limits and enums.
		Entry("StoryboardRequest: videoName is required", vsb("{scenes: [{story: Hello}]}"), "spec.videoName", msgRequired),
		Entry("Limits: videoName 150 chars", vsb("{videoName: "+longString(151)+", scenes: [{story: Hello}]}"), "spec.videoName", msgTooLong),
		Entry("StoryboardRequest: videoName allows letters, digits, spaces, underscores, hyphens", vsb("{videoName: 'Q3/Q4 review', scenes: [{story: Hello}]}"), "spec.videoName", msgNoMatch),
		Entry("StoryboardRequest: scenes unless templateId", vsb("{videoName: test}"), "spec.scenes", "scenes is required unless templateId is given"),
		Entry("StoryboardRequest: scenes, when given, are not empty", vsb("{videoName: test, scenes: []}"), "spec.scenes", msgTooFew),
		Entry("StoryboardRequest: videoWidth together with videoHeight", vsb(storyReq("videoWidth: 1920")), "spec", "videoWidth and videoHeight must be given together"),
		Entry("StoryboardRequest: videoHeight together with videoWidth", vsb(storyReq("videoHeight: 1080")), "spec", "videoWidth and videoHeight must be given together"),
		Entry("StoryboardRequest: videoWidth is a positive number of pixels", vsb(storyReq("videoWidth: 0, videoHeight: 1080")), "spec.videoWidth", msgTooSmall),
		Entry("StoryboardRequest: aspectRatio enum", vsb(storyReq("aspectRatio: '2:1'")), "spec.aspectRatio", msgNotEnum),
		Entry("StoryboardRequest: language enum", vsb(storyReq("language: sv")), "spec.language", msgNotEnum),
		Entry("Limits: webhook URL 500 chars", vsb(storyReq("webhook: "+longURL(501))), "spec.webhook", msgTooLong),
		Entry("StoryboardRequest: webhook is a uri", vsb(storyReq("webhook: 'not a url'")), "spec.webhook", msgNotURI),
		Entry("StoryboardRequest: webhookInput is an object", vsb(storyReq("webhookInput: [1, 2]")), "spec.webhookInput", "object"),
		Entry("StoryboardRequest: projectMetadata is an object", vsb(storyReq("projectMetadata: text")), "spec.projectMetadata", "object"),
		Entry("Limits: connection ids 500 chars (objectstore)", vsb(storyReq("objectstoreConnectionId: "+longString(501))), "spec.objectstoreConnectionId", msgTooLong),
		Entry("Limits: connection ids 500 chars (videohost)", vsb(storyReq("videohostConnectionId: "+longString(501))), "spec.videohostConnectionId", msgTooLong),
		Entry("Limits: destinations 5", vsb(storyReq("destinations: ["+repeatItems("{type: videohost}", 6)+"]")), "spec.destinations", msgTooMany),
		Entry("StoryboardRequest: brandId / brandName mutually exclusive", vsb(storyReq("brandId: b-1, brandName: Acme")), "spec.brandName", "brandId and brandName are mutually exclusive"),
		Entry("StoryboardRequest: smartLayoutId / smartLayoutName mutually exclusive", vsb(storyReq("smartLayoutId: l-1, smartLayoutName: Bold")), "spec.smartLayoutName", "smartLayoutId and smartLayoutName are mutually exclusive"),
		Entry("StoryboardRequest: subtitleStyleId / subtitleStyleName mutually exclusive", vsb(storyReq("subtitleStyleId: s-1, subtitleStyleName: Clean")), "spec.subtitleStyleName", "subtitleStyleId and subtitleStyleName are mutually exclusive"),
		Entry("StoryboardRequest: storyboardVersion only v3", vsb(storyReq("storyboardVersion: v2")), "spec.storyboardVersion", msgNotEnum),
		Entry("StoryboardRequest: variables only valid with templateId", vsb(storyReq("variables: {team: Platform}")), "spec.variables", "variables are only valid with templateId"),
		Entry("StoryboardRequest: payloadUrl is a uri", vsb(storyReq("payloadUrl: 'not a url'")), "spec.payloadUrl", msgNotURI),
		Entry("Avatar: avatars require voice-over (none)", vsb(storyReq("avatar: {avatarId: a-1}")), "spec.avatar", "avatar requires voiceOver with enabled: true"),
		Entry("Avatar: avatars require voice-over (disabled)", vsb(storyReq("voiceOver: {enabled: false}, avatar: {avatarId: a-1}")), "spec.avatar", "avatar requires voiceOver with enabled: true"),

		// AI storyboard rules: text-to-video only, each refusal with its own message.
		Entry("AI storyboard rules: templates are rejected", vsb(aiReq("templateId: tpl-1")), "spec.templateId", "AI storyboard mode does not support templates"),
		Entry("AI storyboard rules: smart layouts are rejected", vsb(aiReq("smartLayoutId: l-1, scenes: [{story: Hello}]")), "spec", "AI storyboard mode does not support smart layouts"),
		Entry("AI storyboard rules: variables are rejected", vsb(aiReq("variables: {a: b}, scenes: [{story: Hello}]")), "spec.variables", "AI storyboard mode does not support template variables"),
		Entry("AI storyboard rules: the 4:5 ratio is rejected", vsb(aiReq("aspectRatio: '4:5', scenes: [{story: Hello}]")), "spec.aspectRatio", "AI storyboard mode does not support the 4:5 aspect ratio"),
		Entry("AI storyboard rules: aiStoryboard.enabled is required", vsb(storyReq("aiStoryboard: {}")), "spec.aiStoryboard.enabled", msgRequired),

		// Value formats: percentage strings and the colour formats the document names.
		Entry("Logo: width is a percentage string", vsb(storyReq("logo: {url: 'https://example.com/l.png', width: wide}")), "spec.logo.width", msgNoMatch),
		Entry("SceneElement: width is a percentage string", vsb(elementReq("type: text, text: Hi, width: huge")), "spec.scenes[0].elements[0].width", msgNoMatch),
		Entry("SceneElement: top is a percentage string", vsb(elementReq("type: text, text: Hi, top: north")), "spec.scenes[0].elements[0].top", msgNoMatch),
		Entry("SceneElement: left is a percentage string", vsb(elementReq("type: text, text: Hi, left: '150%'")), "spec.scenes[0].elements[0].left", msgNoMatch),
		Entry("PremiumVoiceSettings: stability is a string holding a percentage", vsb(storyReq("voiceOver: {enabled: true, aiVoices: [{speaker: Emma, premiumVoiceSettings: {stability: steady}}]}")), "spec.voiceOver.aiVoices[0].premiumVoiceSettings.stability", msgNoMatch),
		Entry("PremiumVoiceSettings: similarityBoost is a string holding a percentage", vsb(storyReq("voiceOver: {enabled: true, aiVoices: [{speaker: Emma, premiumVoiceSettings: {similarityBoost: high}}]}")), "spec.voiceOver.aiVoices[0].premiumVoiceSettings.similarityBoost", msgNoMatch),
		Entry("PremiumVoiceSettings: style is a string holding a percentage", vsb(storyReq("voiceOver: {enabled: true, aiVoices: [{speaker: Emma, premiumVoiceSettings: {style: '-5'}}]}")), "spec.voiceOver.aiVoices[0].premiumVoiceSettings.style", msgNoMatch),
		Entry("Background: color is RGBA or hex", vsb(backgroundReq("color: blue")), "spec.scenes[0].background.color", msgNoMatch),
		Entry("ColorOverlay: color is RGB, RGBA or hex", vsb(backgroundReq("color: '#000000', colorOverlay: {color: red}")), "spec.scenes[0].background.colorOverlay.color", msgNoMatch),
		Entry("SubtitleStyle: color is RGBA", vsb(storyReq("subtitleStyle: {color: 'rgba(300, 0, 0, 1)'}")), "spec.subtitleStyle.color", msgNoMatch),
		Entry("Avatar: borderColor is RGBA", vsb(storyReq("voiceOver: {enabled: true}, avatar: {avatarId: a-1, borderColor: black}")), "spec.avatar.borderColor", msgNoMatch),
		Entry("Avatar: backgroundColor is RGBA", vsb(storyReq("voiceOver: {enabled: true}, avatar: {avatarId: a-1, backgroundColor: '#ffffff'}")), "spec.avatar.backgroundColor", msgNoMatch),
		Entry("Avatar: avatarId cannot be changed at scene level", vsb(storySceneReq("avatar: {avatarId: a-2}")), "spec.scenes[0].avatar.avatarId", "avatarId cannot be changed at scene level"),
		Entry("StoryboardRequest: webhook is an absolute URI", vsb(storyReq("webhook: /hook")), "spec.webhook", msgNoMatch),
		Entry("Avatar: width is at most 100%", vsb(storyReq("voiceOver: {enabled: true}, avatar: {avatarId: a-1, width: '999%'}")), "spec.avatar.width", msgNoMatch),
		Entry("Scene: a sourceless scene needs a templateOverride, even with templateId", vsb("{videoName: test, templateId: tpl-1, scenes: [{hideSubtitles: true}]}"), "spec.scenes[0]", "a scene takes exactly one content source"),

		// VoiceOver, AiVoice, PremiumVoiceSettings, ExternalVoice.
		Entry("VoiceOver: enabled is required", vsb(storyReq("voiceOver: {aiVoices: [{speaker: Emma}]}")), "spec.voiceOver.enabled", msgRequired),
		Entry("VoiceOver: aiVoices mutually exclusive with externalVoice", vsb(storyReq("voiceOver: {enabled: true, aiVoices: [{speaker: Emma}], externalVoice: {voiceUrl: 'https://example.com/v.mp3'}}")), "spec.voiceOver", "aiVoices and externalVoice are mutually exclusive"),
		Entry("Limits: aiVoices 10", vsb(storyReq("voiceOver: {enabled: true, aiVoices: ["+repeatItems("{speaker: Emma}", 11)+"]}")), "spec.voiceOver.aiVoices", msgTooMany),
		Entry("VoiceOver: AiVoice speaker is required", vsb(storyReq("voiceOver: {enabled: true, aiVoices: [{speed: 100}]}")), "spec.voiceOver.aiVoices[0].speaker", msgRequired),
		Entry("Limits: premium voice settings speed 50-200 (below)", vsb(storyReq("voiceOver: {enabled: true, aiVoices: [{speaker: Emma, speed: 49}]}")), "spec.voiceOver.aiVoices[0].speed", msgTooSmall),
		Entry("Limits: premium voice settings speed 50-200 (above)", vsb(storyReq("voiceOver: {enabled: true, aiVoices: [{speaker: Emma, speed: 200.5}]}")), "spec.voiceOver.aiVoices[0].speed", msgTooLarge),
		Entry("Limits: premium voice settings amplification -1 to 1", vsb(storyReq("voiceOver: {enabled: true, aiVoices: [{speaker: Emma, amplificationLevel: -1.5}]}")), "spec.voiceOver.aiVoices[0].amplificationLevel", msgTooSmall),
		Entry("VoiceOver: PremiumVoiceSettings modelId enum", vsb(storyReq("voiceOver: {enabled: true, aiVoices: [{speaker: Emma, premiumVoiceSettings: {modelId: premium_v4}}]}")), "spec.voiceOver.aiVoices[0].premiumVoiceSettings.modelId", msgNotEnum),
		Entry("VoiceOver: ExternalVoice voiceUrl is required", vsb(storyReq("voiceOver: {enabled: true, externalVoice: {syncVoice: true}}")), "spec.voiceOver.externalVoice.voiceUrl", msgRequired),
		Entry("VoiceOver: ExternalVoice amplificationLevel -1 to 1", vsb(storyReq("voiceOver: {enabled: true, externalVoice: {voiceUrl: 'https://example.com/v.mp3', amplificationLevel: 2}}")), "spec.voiceOver.externalVoice.amplificationLevel", msgTooLarge),

		// BackgroundMusic.
		Entry("BackgroundMusic: enabled is required", vsb(storyReq("backgroundMusic: {autoMusic: true}")), "spec.backgroundMusic.enabled", msgRequired),
		Entry("BackgroundMusic: autoMusic and musicUrl mutually exclusive", vsb(storyReq("backgroundMusic: {enabled: true, autoMusic: true, musicUrl: 'https://example.com/m.mp3'}")), "spec.backgroundMusic", "autoMusic and musicUrl are mutually exclusive"),
		Entry("Limits: premium voice settings volume 0 to 1", vsb(storyReq("backgroundMusic: {enabled: true, volume: 1.5}")), "spec.backgroundMusic.volume", msgTooLarge),
		Entry("Limits: background music clips 10", vsb(storyReq("backgroundMusic: {enabled: true, clips: ["+repeatItems("{start: 0, end: 1}", 11)+"]}")), "spec.backgroundMusic.clips", msgTooMany),
		Entry("BackgroundMusic: clip start and end both required", vsb(storyReq("backgroundMusic: {enabled: true, clips: [{start: 1}]}")), "spec.backgroundMusic.clips[0].end", msgRequired),
		Entry("Scene: backgroundMusic enabled is required", vsb(storySceneReq("backgroundMusic: {}")), "spec.scenes[0].backgroundMusic.enabled", msgRequired),

		// Logo, Avatar, Position.
		Entry("Logo: url is required", vsb(storyReq("logo: {position: top-left}")), "spec.logo.url", msgRequired),
		Entry("Position: one of nine values", vsb(storyReq("logo: {url: 'https://example.com/l.png', position: middle}")), "spec.logo.position", msgNotEnum),
		Entry("Avatar: avatarId is required", vsb(storyReq("voiceOver: {enabled: true}, avatar: {position: top-left}")), "spec.avatar.avatarId", msgRequired),
		Entry("Avatar: width is an integer percentage 0-100%", vsb(storyReq("voiceOver: {enabled: true}, avatar: {avatarId: a-1, width: '120%'}")), "spec.avatar.width", msgNoMatch),
		Entry("Avatar: borderRadius 0, 50 or 100", vsb(storyReq("voiceOver: {enabled: true}, avatar: {avatarId: a-1, borderRadius: '25'}")), "spec.avatar.borderRadius", msgNotEnum),
		Entry("Avatar: borderThickness minimum 0", vsb(storyReq("voiceOver: {enabled: true}, avatar: {avatarId: a-1, borderThickness: -1}")), "spec.avatar.borderThickness", msgTooSmall),
		Entry("Avatar: scene-level top/left cannot be combined with position", vsb(storySceneReq("avatar: {position: top-left, top: '10%'}")), "spec.scenes[0].avatar", "top and left cannot be combined with position"),
		Entry("Avatar: scene-level top is an integer-percentage string", vsb(storySceneReq("avatar: {top: '1.5'}")), "spec.scenes[0].avatar.top", msgNoMatch),

		// SubtitleStyle and TextAnimation.
		Entry("SubtitleStyle: fontFamily required when fontUrl is given", vsb(storyReq("subtitleStyle: {fontUrl: 'https://example.com/f.ttf'}")), "spec.subtitleStyle.fontFamily", "fontFamily is required when fontUrl is given"),
		Entry("SubtitleStyle: fontSize min 1", vsb(storyReq("subtitleStyle: {fontSize: 0}")), "spec.subtitleStyle.fontSize", msgTooSmall),
		Entry("SubtitleStyle: alignment enum", vsb(storyReq("subtitleStyle: {alignment: justify}")), "spec.subtitleStyle.alignment", msgNotEnum),
		Entry("SubtitleStyle: decorations enum", vsb(storyReq("subtitleStyle: {decorations: [bold, strike]}")), "spec.subtitleStyle.decorations[1]", msgNotEnum),
		Entry("SubtitleStyle: case enum", vsb(storyReq("subtitleStyle: {case: title}")), "spec.subtitleStyle.case", msgNotEnum),
		Entry("SubtitleStyle: position is a Position", vsb(storyReq("subtitleStyle: {position: center}")), "spec.subtitleStyle.position", msgNotEnum),
		Entry("Limits: subtitle animations 2", vsb(storyReq("subtitleStyle: {animations: ["+repeatItems("{name: fade, type: entry, speed: slow}", 3)+"]}")), "spec.subtitleStyle.animations", msgTooMany),
		Entry("SubtitleStyle: one entry and one exit animation", vsb(storyReq("subtitleStyle: {animations: [{name: fade, type: entry, speed: slow}, {name: wipe, type: entry, speed: fast}]}")), "spec.subtitleStyle.animations", "animations holds at most one entry and one exit animation"),
		Entry("SubtitleStyle: TextAnimation name enum", vsb(storyReq("subtitleStyle: {animations: [{name: spin, type: entry, speed: slow}]}")), "spec.subtitleStyle.animations[0].name", msgNotEnum),
		Entry("SubtitleStyle: TextAnimation type is required", vsb(storyReq("subtitleStyle: {animations: [{name: fade, speed: slow}]}")), "spec.subtitleStyle.animations[0].type", msgRequired),
		Entry("SubtitleStyle: TextAnimation speed enum", vsb(storyReq("subtitleStyle: {animations: [{name: fade, type: entry, speed: turbo}]}")), "spec.subtitleStyle.animations[0].speed", msgNotEnum),
		Entry("SubtitleStyle: customSpeedValue required when speed is custom", vsb(storyReq("subtitleStyle: {animations: [{name: fade, type: entry, speed: custom}]}")), "spec.subtitleStyle.animations[0].customSpeedValue", "customSpeedValue is required when speed is custom"),
		Entry("SubtitleStyle: customSpeedValue min 0.5", vsb(storyReq("subtitleStyle: {animations: [{name: fade, type: entry, speed: custom, customSpeedValue: 0.4}]}")), "spec.subtitleStyle.animations[0].customSpeedValue", msgTooSmall),
		Entry("SubtitleStyle: direction enum", vsb(storyReq("subtitleStyle: {animations: [{name: drift, type: entry, speed: slow, direction: north}]}")), "spec.subtitleStyle.animations[0].direction", msgNotEnum),
		Entry("SubtitleStyle: writingStyle enum", vsb(storyReq("subtitleStyle: {animations: [{name: typewriter, type: entry, speed: slow, writingStyle: sentence}]}")), "spec.subtitleStyle.animations[0].writingStyle", msgNotEnum),
		Entry("SubtitleStyle: futureWords enum", vsb(storyReq("subtitleStyle: {animations: [{name: fade, type: entry, speed: slow, futureWords: faint}]}")), "spec.subtitleStyle.animations[0].futureWords", msgNotEnum),
		Entry("SubtitleStyle: futureWords only with fade and blur (drift)", vsb(storyReq("subtitleStyle: {animations: [{name: drift, type: entry, speed: slow, futureWords: subtle}]}")), "spec.subtitleStyle.animations[0].futureWords", "futureWords applies only to fade and blur entry animations"),
		Entry("SubtitleStyle: futureWords only with entry animations (exit)", vsb(storyReq("subtitleStyle: {animations: [{name: blur, type: exit, speed: slow, futureWords: subtle}]}")), "spec.subtitleStyle.animations[0].futureWords", "futureWords applies only to fade and blur entry animations"),

		// Destination (oneOf).
		Entry("Destination (oneOf): type is required", vsb(storyReq("destinations: [{bucket: b}]")), "spec.destinations[0].type", msgRequired),
		Entry("Destination (oneOf): type videohost or objectstore", vsb(storyReq("destinations: [{type: ftp}]")), "spec.destinations[0].type", msgNotEnum),
		Entry("Destination (oneOf): objectstore needs bucket, region and key", vsb(storyReq("destinations: [{type: objectstore, bucket: b, region: eu-west-1}]")), "spec.destinations[0]", "bucket, region and key are required for an objectstore destination"),
		Entry("Destination (oneOf): objectstore fields not on a videohost", vsb(storyReq("destinations: [{type: videohost, bucket: b}]")), "spec.destinations[0]", "bucket, region and key apply only to objectstore destinations"),
		Entry("Destination (oneOf): videohost fields not on an objectstore", vsb(storyReq("destinations: [{type: objectstore, bucket: b, region: r, key: k, folder_uri: /f}]")), "spec.destinations[0]", "folder_uri, content_rating and privacy apply only to videohost destinations"),
		Entry("Destination (oneOf): content_rating enum", vsb(storyReq("destinations: [{type: videohost, content_rating: [safe, gore]}]")), "spec.destinations[0].content_rating[1]", msgNotEnum),
		Entry("Destination (oneOf): privacy view enum", vsb(storyReq("destinations: [{type: videohost, privacy: {view: everyone}}]")), "spec.destinations[0].privacy.view", msgNotEnum),
		Entry("Destination (oneOf): privacy embed enum", vsb(storyReq("destinations: [{type: videohost, privacy: {embed: anywhere}}]")), "spec.destinations[0].privacy.embed", msgNotEnum),
		Entry("Destination (oneOf): privacy comments enum", vsb(storyReq("destinations: [{type: videohost, privacy: {comments: users}}]")), "spec.destinations[0].privacy.comments", msgNotEnum),

		// Scene.
		Entry("Scene: exactly one content source (two)", vsb(sceneReq("story: Hello, blogUrl: 'https://example.com/b'")), "spec.scenes[0]", "a scene takes exactly one content source"),
		Entry("Scene: exactly one content source (none)", vsb(sceneReq("hideSubtitles: true")), "spec.scenes[0]", "a scene takes exactly one content source"),
		Entry("Versioning: brief and storyCoPilot not both", vsb(sceneReq("brief: {prompt: a}, storyCoPilot: {prompt: b}")), "spec.scenes[0].storyCoPilot", "brief and storyCoPilot are mutually exclusive"),
		Entry("Limits: scene story 15000 chars", vsb(sceneReq("story: "+longString(15001))), "spec.scenes[0].story", msgTooLong),
		Entry("Limits: blogUrl 3000 chars", vsb(sceneReq("blogUrl: "+longURL(3001))), "spec.scenes[0].blogUrl", msgTooLong),
		Entry("Limits: pptUrl 3000 chars", vsb(sceneReq("pptUrl: "+longURL(3001))), "spec.scenes[0].pptUrl", msgTooLong),
		Entry("Limits: audioUrl 3000 chars", vsb(sceneReq("audioUrl: "+longURL(3001)+", audioLanguage: en-US, transcript: [{words: [{word: a, start_time: 0, end_time: 1}]}]")), "spec.scenes[0].audioUrl", msgTooLong),
		Entry("Limits: videoUrl 3000 chars", vsb(sceneReq("videoUrl: "+longURL(3001)+", audioLanguage: en-US, transcript: [{words: [{word: a, start_time: 0, end_time: 1}]}]")), "spec.scenes[0].videoUrl", msgTooLong),
		Entry("Scene: blogUrl is a uri", vsb(sceneReq("blogUrl: 'my blog'")), "spec.scenes[0].blogUrl", msgNotURI),
		Entry("Scene: audioLanguage required with audioUrl", vsb(sceneReq("audioUrl: 'https://example.com/a.mp3', transcript: [{words: [{word: a, start_time: 0, end_time: 1}]}]")), "spec.scenes[0].audioLanguage", "audioLanguage is required with audioUrl or videoUrl"),
		Entry("Scene: audioLanguage required with videoUrl", vsb(sceneReq("videoUrl: 'https://example.com/a.mp4', transcript: [{words: [{word: a, start_time: 0, end_time: 1}]}]")), "spec.scenes[0].audioLanguage", "audioLanguage is required with audioUrl or videoUrl"),
		Entry("Scene: transcript required with audioUrl/videoUrl", vsb(sceneReq("videoUrl: 'https://example.com/a.mp4', audioLanguage: en-US")), "spec.scenes[0].transcript", "transcript is required with audioUrl or videoUrl"),
		Entry("Scene: audioLanguage enum", vsb(sceneReq("audioUrl: 'https://example.com/a.mp3', audioLanguage: en-NZ, transcript: [{words: [{word: a, start_time: 0, end_time: 1}]}]")), "spec.scenes[0].audioLanguage", msgNotEnum),
		Entry("Limits: maxSubtitleLines 1 to 4 (above)", vsb(storySceneReq("maxSubtitleLines: 5")), "spec.scenes[0].maxSubtitleLines", msgTooLarge),
		Entry("Limits: maxSubtitleLines 1 to 4 (below)", vsb(storySceneReq("maxSubtitleLines: 0")), "spec.scenes[0].maxSubtitleLines", msgTooSmall),
		Entry("Scene: sceneTransition enum", vsb(storySceneReq("sceneTransition: dissolve")), "spec.scenes[0].sceneTransition", msgNotEnum),
		Entry("Scene: useSpeakerNotes only with pptUrl", vsb(storySceneReq("useSpeakerNotes: true")), "spec.scenes[0].useSpeakerNotes", "useSpeakerNotes is only valid with pptUrl"),
		Entry("Scene: pptSlideAnimation only with pptUrl", vsb(storySceneReq("pptSlideAnimation: {enabled: true}")), "spec.scenes[0].pptSlideAnimation", "pptSlideAnimation is only valid with pptUrl"),
		Entry("Scene: pptSlideAnimation model enum", vsb(sceneReq("pptUrl: 'https://example.com/d.pptx', pptSlideAnimation: {model: pixverse5.5}")), "spec.scenes[0].pptSlideAnimation.model", msgNotEnum),
		Entry("Scene: pptSlideAnimation slides start at 1", vsb(sceneReq("pptUrl: 'https://example.com/d.pptx', pptSlideAnimation: {slides: [0]}")), "spec.scenes[0].pptSlideAnimation.slides[0]", msgTooSmall),
		Entry("Scene: isSSMLStory only with story", vsb(sceneReq("blogUrl: 'https://example.com/b', isSSMLStory: true")), "spec.scenes[0].isSSMLStory", "isSSMLStory is only valid with story"),
		Entry("Scene: caption requires story", vsb(sceneReq("blogUrl: 'https://example.com/b', caption: Hi")), "spec.scenes[0].caption", "caption requires story"),
		Entry("Limits: caption 3000 chars", vsb(storySceneReq("caption: "+longString(3001))), "spec.scenes[0].caption", msgTooLong),
		Entry("Scene: captionLanguage only with caption", vsb(storySceneReq("captionLanguage: en")), "spec.scenes[0].captionLanguage", "captionLanguage is only valid with caption"),
		Entry("Scene: captionLanguage has the values of language", vsb(storySceneReq("caption: Hi, captionLanguage: en-US")), "spec.scenes[0].captionLanguage", msgNotEnum),
		Entry("Scene: mediaRepurposeSettings only with audioUrl/videoUrl", vsb(storySceneReq("mediaRepurposeSettings: {removeSilences: true}")), "spec.scenes[0].mediaRepurposeSettings", "mediaRepurposeSettings is only valid with audioUrl or videoUrl"),
		Entry("Scene: mediaRepurposeSettings highlightLength 5-180", vsb(sceneReq("videoUrl: 'https://example.com/a.mp4', audioLanguage: en-US, transcript: [{words: [{word: a, start_time: 0, end_time: 1}]}], mediaRepurposeSettings: {highlightLength: 181}")), "spec.scenes[0].mediaRepurposeSettings.highlightLength", msgTooLarge),
		Entry("Scene: mediaRepurposeSettings silenceThresholdSeconds 0-10", vsb(sceneReq("videoUrl: 'https://example.com/a.mp4', audioLanguage: en-US, transcript: [{words: [{word: a, start_time: 0, end_time: 1}]}], mediaRepurposeSettings: {silenceThresholdSeconds: 11}")), "spec.scenes[0].mediaRepurposeSettings.silenceThresholdSeconds", msgTooLarge),
		Entry("Scene: subtitleStyleId / subtitleStyleName mutually exclusive", vsb(storySceneReq("subtitleStyleId: s-1, subtitleStyleName: Clean")), "spec.scenes[0].subtitleStyleName", "subtitleStyleId and subtitleStyleName are mutually exclusive"),
		Entry("Limits: backgroundCorpus 100 items", vsb(storySceneReq("backgroundCorpus: ["+repeatItems("{visualUrl: 'https://example.com/i.png'}", 101)+"]")), "spec.scenes[0].backgroundCorpus", msgTooMany),
		Entry("Scene: backgroundCorpus type is image", vsb(storySceneReq("backgroundCorpus: [{visualUrl: 'https://example.com/i.mp4', type: video}]")), "spec.scenes[0].backgroundCorpus[0].type", msgNotEnum),
		Entry("Scene: backgroundBrolls need brollClip", vsb(storySceneReq("backgroundBrolls: [{visualUrl: 'https://example.com/b.mp4'}]")), "spec.scenes[0].backgroundBrolls[0].brollClip", msgRequired),
		Entry("Limits: scene elements 20 per scene", vsb(storySceneReq("elements: ["+repeatItems("{type: text, text: Hi}", 21)+"]")), "spec.scenes[0].elements", msgTooMany),
		Entry("TemplateOverride: subtitle style keeps plain bounds", vsb(templateReq("subtitles: [{text: a, style: {alignment: justify}}]")), "spec.scenes[0].templateOverride.subtitles[0].style.alignment", msgNotEnum),

		// Scene: brief / storyCoPilot.
		Entry("Scene: brief prompt is required", vsb(sceneReq("brief: {duration: 60}")), "spec.scenes[0].brief.prompt", msgRequired),
		Entry("Limits: brief prompt 1-5000 chars (long)", vsb(sceneReq("brief: {prompt: "+longString(5001)+"}")), "spec.scenes[0].brief.prompt", msgTooLong),
		Entry("Limits: brief prompt 1-5000 chars (empty)", vsb(sceneReq("brief: {prompt: ''}")), "spec.scenes[0].brief.prompt", msgTooShort),
		Entry("Limits: brief duration 1-600", vsb(sceneReq("brief: {prompt: a, duration: 601}")), "spec.scenes[0].brief.duration", msgTooLarge),
		Entry("Scene: brief videoGoal enum", vsb(sceneReq("brief: {prompt: a, videoGoal: Documentary}")), "spec.scenes[0].brief.videoGoal", msgNotEnum),
		Entry("Scene: storyCoPilot videoType enum", vsb(sceneReq("storyCoPilot: {prompt: a, videoType: Documentary}")), "spec.scenes[0].storyCoPilot.videoType", msgNotEnum),
		Entry("Scene: brief platform enum", vsb(sceneReq("brief: {prompt: a, platform: Vimeo}")), "spec.scenes[0].brief.platform", msgNotEnum),
		Entry("Scene: brief tone enum", vsb(sceneReq("brief: {prompt: a, tone: angry}")), "spec.scenes[0].brief.tone", msgNotEnum),
		Entry("Versioning: videoGoal and videoType not both", vsb(sceneReq("brief: {prompt: a, videoGoal: Marketing, videoType: Tutorial}")), "spec.scenes[0].brief.videoType", "videoGoal and videoType are mutually exclusive"),

		// Scene: transcript.
		Entry("Scene: transcript words min 1", vsb(sceneReq("videoUrl: 'https://example.com/a.mp4', audioLanguage: en-US, transcript: [{words: []}]")), "spec.scenes[0].transcript[0].words", msgTooFew),
		Entry("Scene: transcript words required", vsb(sceneReq("videoUrl: 'https://example.com/a.mp4', audioLanguage: en-US, transcript: [{speakerId: 1}]")), "spec.scenes[0].transcript[0].words", msgRequired),
		Entry("Scene: transcript word start_time required", vsb(sceneReq("videoUrl: 'https://example.com/a.mp4', audioLanguage: en-US, transcript: [{words: [{word: a, end_time: 1}]}]")), "spec.scenes[0].transcript[0].words[0].start_time", msgRequired),
		Entry("Scene: transcript start_time >= 0", vsb(sceneReq("videoUrl: 'https://example.com/a.mp4', audioLanguage: en-US, transcript: [{words: [{word: a, start_time: -0.5, end_time: 1}]}]")), "spec.scenes[0].transcript[0].words[0].start_time", msgTooSmall),

		// Background, SearchFilter, ColorOverlay.
		Entry("Background: exactly one of visualUrl, color or aiVisual (two)", vsb(backgroundReq("visualUrl: 'https://example.com/i.png', color: '#ffffff'")), "spec.scenes[0].background", "background takes exactly one of visualUrl, color or aiVisual"),
		Entry("Background: exactly one of visualUrl, color or aiVisual (none)", vsb(backgroundReq("type: image")), "spec.scenes[0].background", "background takes exactly one of visualUrl, color or aiVisual"),
		Entry("Background: type required with aiVisual", vsb(backgroundReq("aiVisual: {model: flux-schnell}")), "spec.scenes[0].background.type", "type (image or video) is required with aiVisual"),
		Entry("Background: type matches the aiVisual model", vsb(aiVisualReq("image", "model: veo3.1")), "spec.scenes[0].background.type", "type must match the aiVisual model"),
		Entry("Background: type enum", vsb(backgroundReq("visualUrl: 'https://example.com/i.gif', type: gif")), "spec.scenes[0].background.type", msgNotEnum),
		Entry("Background: visualUrl is a uri", vsb(backgroundReq("visualUrl: 'picture.png'")), "spec.scenes[0].background.visualUrl", msgNotURI),
		Entry("Background: zoomAndPan and kenBurnsEffect mutually exclusive", vsb(backgroundReq("visualUrl: 'https://example.com/i.png', settings: {zoomAndPan: true, kenBurnsEffect: true}")), "spec.scenes[0].background.settings", "zoomAndPan and kenBurnsEffect are mutually exclusive"),
		Entry("Background: kenBurnsEffect applies to images only", vsb(backgroundReq("visualUrl: 'https://example.com/v.mp4', type: video, settings: {kenBurnsEffect: true}")), "spec.scenes[0].background.settings.kenBurnsEffect", "kenBurnsEffect applies to images only"),
		Entry("Background: clips start and end both required", vsb(backgroundReq("visualUrl: 'https://example.com/v.mp4', clips: [{end: 3}]")), "spec.scenes[0].background.clips[0].start", msgRequired),
		Entry("Limits: search query 3000 chars", vsb(backgroundReq("searchFilter: {query: "+longString(3001)+"}")), "spec.scenes[0].background.searchFilter.query", msgTooLong),
		Entry("Limits: search keywords 10 items", vsb(backgroundReq("searchFilter: {keywords: ["+repeatItems("city", 11)+"]}")), "spec.scenes[0].background.searchFilter.keywords", msgTooMany),
		Entry("Limits: search keywords 2-100 chars (short)", vsb(backgroundReq("searchFilter: {keywords: [a]}")), "spec.scenes[0].background.searchFilter.keywords[0]", msgTooShort),
		Entry("Limits: search keywords 2-100 chars (long)", vsb(backgroundReq("searchFilter: {keywords: ["+longString(101)+"]}")), "spec.scenes[0].background.searchFilter.keywords[0]", msgTooLong),
		Entry("SearchFilter: libraries enum", vsb(backgroundReq("searchFilter: {libraries: [stocklib_3]}")), "spec.scenes[0].background.searchFilter.libraries[0]", msgNotEnum),
		Entry("ColorOverlay: color is required", vsb(backgroundReq("color: '#000000', colorOverlay: {opacity: 0.5}")), "spec.scenes[0].background.colorOverlay.color", msgRequired),
		Entry("ColorOverlay: opacity 0-1", vsb(backgroundReq("color: '#000000', colorOverlay: {color: '#ff0000', opacity: 1.2}")), "spec.scenes[0].background.colorOverlay.opacity", msgTooLarge),

		// AiVisual.
		Entry("AiVisual: model is required", vsb(backgroundReq("type: image, aiVisual: {prompt: a lake}")), "spec.scenes[0].background.aiVisual.model", msgRequired),
		Entry("AiVisual: model enum", vsb(aiVisualReq("image", "model: dall-e")), "spec.scenes[0].background.aiVisual.model", msgNotEnum),
		Entry("Limits: AI visual prompt 500 chars", vsb(aiVisualReq("image", "model: flux-schnell, prompt: "+longString(501))), "spec.scenes[0].background.aiVisual.prompt", msgTooLong),
		Entry("AiVisual: mediaStyle enum", vsb(aiVisualReq("image", "model: flux-schnell, mediaStyle: noir")), "spec.scenes[0].background.aiVisual.mediaStyle", msgNotEnum),
		Entry("AiVisual: mediaStyle image type only", vsb(aiVisualReq("video", "model: pixverse5.5, mediaStyle: cartoon")), "spec.scenes[0].background.aiVisual.mediaStyle", "mediaStyle applies to image models only"),
		Entry("AiVisual: videoDuration enum", vsb(aiVisualReq("video", "model: pixverse5.5, videoDuration: 7s")), "spec.scenes[0].background.aiVisual.videoDuration", msgNotEnum),
		Entry("AiVisual: videoDuration for pixverse5.5 is 5s/8s/10s", vsb(aiVisualReq("video", "model: pixverse5.5, videoDuration: 4s")), "spec.scenes[0].background.aiVisual.videoDuration", "videoDuration for pixverse5.5 must be 5s, 8s or 10s"),
		Entry("AiVisual: videoDuration for veo3.1 is 4s/6s/8s", vsb(aiVisualReq("video", "model: veo3.1, videoDuration: 10s")), "spec.scenes[0].background.aiVisual.videoDuration", "videoDuration for veo3.1 and veo3.1_fast must be 4s, 6s or 8s"),
		Entry("AiVisual: videoDuration for veo3.1_fast is 4s/6s/8s", vsb(aiVisualReq("video", "model: veo3.1_fast, videoDuration: 5s")), "spec.scenes[0].background.aiVisual.videoDuration", "videoDuration for veo3.1 and veo3.1_fast must be 4s, 6s or 8s"),
		Entry("AiVisual: image models take no videoDuration", vsb(aiVisualReq("image", "model: nanobanana, videoDuration: 5s")), "spec.scenes[0].background.aiVisual.videoDuration", "videoDuration applies to video models only"),
		Entry("AiVisual: firstFrameImageUrl video only", vsb(aiVisualReq("image", "model: seedream3.0, firstFrameImageUrl: 'https://example.com/f.png'")), "spec.scenes[0].background.aiVisual.firstFrameImageUrl", "firstFrameImageUrl applies to video models only"),
		Entry("AiVisual: referenceImageUrls video only", vsb(aiVisualReq("image", "model: nanobanana-pro, referenceImageUrls: ['https://example.com/r.png']")), "spec.scenes[0].background.aiVisual.referenceImageUrls", "referenceImageUrls applies to video models only"),
		Entry("AiVisual: firstFrameImageUrl mutually exclusive with referenceImageUrls", vsb(aiVisualReq("video", "model: veo3.1, firstFrameImageUrl: 'https://example.com/f.png', referenceImageUrls: ['https://example.com/r.png']")), "spec.scenes[0].background.aiVisual.referenceImageUrls", "firstFrameImageUrl and referenceImageUrls are mutually exclusive"),
		Entry("AiVisual: referenceImageUrl image only", vsb(aiVisualReq("video", "model: veo3.1, referenceImageUrl: 'https://example.com/r.png'")), "spec.scenes[0].background.aiVisual.referenceImageUrl", "referenceImageUrl applies to image models only"),
		Entry("Limits: reference images for video 1 to 2 (three)", vsb(aiVisualReq("video", "model: veo3.1, referenceImageUrls: ["+repeatItems("'https://example.com/r.png'", 3)+"]")), "spec.scenes[0].background.aiVisual.referenceImageUrls", msgTooMany),
		Entry("Limits: reference images for video 1 to 2 (none)", vsb(aiVisualReq("video", "model: veo3.1, referenceImageUrls: []")), "spec.scenes[0].background.aiVisual.referenceImageUrls", msgTooFew),

		// SceneElement.
		Entry("SceneElement: type is required", vsb(elementReq("text: Hi")), "spec.scenes[0].elements[0].type", msgRequired),
		Entry("SceneElement: type enum", vsb(elementReq("type: sticker")), "spec.scenes[0].elements[0].type", msgNotEnum),
		Entry("SceneElement: position enum", vsb(elementReq("type: text, text: Hi, position: middle")), "spec.scenes[0].elements[0].position", msgNotEnum),
		Entry("Limits: element text 2000 chars", vsb(elementReq("type: text, text: "+longString(2001))), "spec.scenes[0].elements[0].text", msgTooLong),
		Entry("SceneElement: textVariant enum", vsb(elementReq("type: text, text: Hi, textVariant: title")), "spec.scenes[0].elements[0].textVariant", msgNotEnum),

		// TemplateOverride.
		Entry("Limits: template subtitles 500", vsb(templateReq("subtitles: ["+repeatItems("{text: a}", 501)+"]")), "spec.scenes[0].templateOverride.subtitles", msgTooMany),
		Entry("TemplateOverride: subtitle text required", vsb(templateReq("subtitles: [{styleId: s-1}]")), "spec.scenes[0].templateOverride.subtitles[0].text", msgRequired),
		Entry("Limits: template subtitles 40000 chars per text", vsb(templateReq("subtitles: [{text: "+longString(40001)+"}]")), "spec.scenes[0].templateOverride.subtitles[0].text", msgTooLong),
		Entry("TemplateOverride: subtitle text 1-40000", vsb(templateReq("subtitles: [{text: ''}]")), "spec.scenes[0].templateOverride.subtitles[0].text", msgTooShort),
		Entry("Limits: template layers 500 (outer)", vsb(templateReq("layers: ["+repeatItems("[{layerId: a}]", 501)+"]")), "spec.scenes[0].templateOverride.layers", msgTooMany),
		Entry("TemplateOverride: each inner layer array 1-500 (empty)", vsb(templateReq("layers: [[]]")), "spec.scenes[0].templateOverride.layers[0]", msgTooFew),
		Entry("TemplateOverride: each inner layer array 1-500 (501)", vsb(templateReq("layers: [["+repeatItems("{layerId: a}", 501)+"]]")), "spec.scenes[0].templateOverride.layers[0]", msgTooMany),
		Entry("TemplateOverride: layerId max 100", vsb(templateReq("layers: [[{layerId: "+longString(101)+"}]]")), "spec.scenes[0].templateOverride.layers[0][0].layerId", msgTooLong),
		Entry("TemplateOverride: layer type enum", vsb(templateReq("layers: [[{type: audio}]]")), "spec.scenes[0].templateOverride.layers[0][0].type", msgNotEnum),
		Entry("TemplateOverride: layer text max 40000", vsb(templateReq("layers: [[{text: "+longString(40001)+"}]]")), "spec.scenes[0].templateOverride.layers[0][0].text", msgTooLong),
		Entry("TemplateOverride: layer url max 3000", vsb(templateReq("layers: [[{url: "+longURL(3001)+"}]]")), "spec.scenes[0].templateOverride.layers[0][0].url", msgTooLong),
		Entry("TemplateOverride: layer visualLibraryId min length 1", vsb(templateReq("layers: [[{visualLibraryId: ''}]]")), "spec.scenes[0].templateOverride.layers[0][0].visualLibraryId", msgTooShort),
		Entry("TemplateOverride: layer style keeps plain bounds", vsb(templateReq("layers: [[{style: {alignment: justify}}]]")), "spec.scenes[0].templateOverride.layers[0][0].style.alignment", msgNotEnum),
		Entry("TemplateOverride: scenePosition min 1", vsb(templateReq("scenePosition: 0")), "spec.scenes[0].templateOverride.scenePosition", msgTooSmall),
		Entry("TemplateOverride: newScenePosition min 1", vsb(templateReq("newScenePosition: 0")), "spec.scenes[0].templateOverride.newScenePosition", msgTooSmall),

		// VideoRender and the object itself.
		Entry("VideoRender: exactly one render source (two)", vr("{projectId: p-1, storyboardRef: {name: s}}"), "spec", "exactly one of storyboard, storyboardRef or projectId is required"),
		Entry("VideoRender: exactly one render source (none)", vr("{apiKeySecretRef: {name: k, key: apiKey}}"), "spec", "exactly one of storyboard, storyboardRef or projectId is required"),
		Entry("VideoRender: spec is required", vr(""), "spec", msgRequired),
		Entry("VideoStoryboard: spec is required", vsb(""), "spec", msgRequired),
		Entry("VideoRender: storyboardRef name is required", vr("{storyboardRef: {}}"), "spec.storyboardRef.name", msgRequired),
		Entry("VideoRender: projectId is not empty", vr("{projectId: ''}"), "spec.projectId", msgTooShort),
		Entry("VideoRender: apiKeySecretRef name is required", vr("{projectId: p-1, apiKeySecretRef: {key: apiKey}}"), "spec.apiKeySecretRef.name", msgRequired),
		Entry("VideoRender: storyboard rules apply at spec.storyboard", vr("{storyboard: "+storyReq("brandId: b-1, brandName: Acme")+"}"), "spec.storyboard.brandName", "brandId and brandName are mutually exclusive"),
		Entry("VideoRender: scene rules apply under spec.storyboard", vr("{storyboard: "+backgroundReq("type: image")+"}"), "spec.storyboard.scenes[0].background", "background takes exactly one of visualUrl, color or aiVisual"),
		Entry("VideoRender: scenes unless templateId under spec.storyboard", vr("{storyboard: {videoName: test}}"), "spec.storyboard.scenes", "scenes is required unless templateId is given"),
	)

	// The rules under requestrules.PresubmitOnly (scene elements, B-rolls, transcript words,
	// template styles) would cost the API server more than its budget on lists the document does
	// not bound: admission accepts the object, and the controller refuses it before submitting,
	// with the field path and the message admission would have given (presubmit_test.go covers
	// transcript words and template styles).
	DescribeTable("accepts at admission and refuses before submitting what admission cannot afford",
		func(obj *unstructured.Unstructured, field, message string) {
			obj.SetNamespace(namespace)
			Expect(k8sClient.Create(ctx, obj)).To(Succeed(), "admission no longer checks this rule")
			Expect(operatorPresubmit(obj)).To(ContainElement(SatisfyAll(
				HaveField("Field", field),
				HaveField("Detail", ContainSubstring(message)),
			)))
			expectSimulatorAgrees(obj, false)
		},
		Entry("Scene: a B-roll is a Background (exactly one source)", vsb(storySceneReq("backgroundBrolls: [{color: '#000000', visualUrl: 'https://example.com/b.mp4', brollClip: {start: 0, end: 2}}]")), "spec.scenes[0].backgroundBrolls[0]", "background takes exactly one of visualUrl, color or aiVisual"),
		Entry("SceneElement: position and top/left mutually exclusive", vsb(elementReq("type: text, text: Hi, position: center, left: '10%'")), "spec.scenes[0].elements[0]", "top and left cannot be combined with position"),
		Entry("SceneElement: name required for a shape", vsb(elementReq("type: shape, fill: '#ffffff'")), "spec.scenes[0].elements[0].name", "name is required for a shape element"),
		Entry("SceneElement: text required for a text element", vsb(elementReq("type: text, textVariant: heading")), "spec.scenes[0].elements[0].text", "text is required for a text element"),
		Entry("SceneElement: style is a SubtitleStyle", vsb(elementReq("type: text, text: Hi, style: {fontUrl: 'https://example.com/f.ttf'}")), "spec.scenes[0].elements[0].style.fontFamily", "fontFamily is required when fontUrl is given"),
		Entry("SceneElement: media elements take exactly one source (none)", vsb(elementReq("type: image, width: '30%'")), "spec.scenes[0].elements[0]", "a video or image element takes exactly one of visualUrl, searchFilter or aiVisual"),
		Entry("SceneElement: media elements take exactly one source (two)", vsb(elementReq("type: video, visualUrl: 'https://example.com/v.mp4', searchFilter: {query: waves}")), "spec.scenes[0].elements[0]", "a video or image element takes exactly one of visualUrl, searchFilter or aiVisual"),
		Entry("SceneElement: searchFilter query required", vsb(elementReq("type: image, searchFilter: {keywords: [city]}")), "spec.scenes[0].elements[0].searchFilter", "an element's searchFilter needs a query of 2 to 3000 characters"),
		Entry("Limits: element search query 2-3000", vsb(elementReq("type: image, searchFilter: {query: a}")), "spec.scenes[0].elements[0].searchFilter", "an element's searchFilter needs a query of 2 to 3000 characters"),
		Entry("SceneElement: borderRadius rectangle only", vsb(elementReq("type: shape, name: circle, borderRadius: 4")), "spec.scenes[0].elements[0].borderRadius", "borderRadius applies to rectangle shapes only"),
		Entry("SceneElement: shape fields apply to shapes", vsb(elementReq("type: text, text: Hi, fill: '#ffffff'")), "spec.scenes[0].elements[0]", "name, fill, stroke, strokeWidth and borderRadius apply only to shape elements"),
		Entry("SceneElement: text fields apply to text", vsb(elementReq("type: shape, name: rectangle, text: Hi")), "spec.scenes[0].elements[0]", "text, textVariant and style apply only to text elements"),
		Entry("SceneElement: media fields apply to video and image", vsb(elementReq("type: text, text: Hi, visualUrl: 'https://example.com/i.png'")), "spec.scenes[0].elements[0]", "visualUrl, searchFilter, aiVisual and colorOverlay apply only to video and image elements"),
		Entry("SceneElement: settings apply to video", vsb(elementReq("type: image, visualUrl: 'https://example.com/i.png', settings: {loop: false}")), "spec.scenes[0].elements[0].settings", "settings apply only to video elements"),
		Entry("SceneElement: aiVisual model matches the element type", vsb(elementReq("type: image, aiVisual: {model: pixverse5.5}")), "spec.scenes[0].elements[0].aiVisual.model", "aiVisual.model must match the element type"),
		Entry("SceneElement: aiVisual is an AiVisual", vsb(elementReq("type: video, aiVisual: {model: veo3.1, videoDuration: 10s}")), "spec.scenes[0].elements[0].aiVisual.videoDuration", "videoDuration for veo3.1 and veo3.1_fast must be 4s, 6s or 8s"),
		Entry("TemplateOverride (only with templateId)", vsb(sceneReq("story: Hello, templateOverride: {scenePosition: 1}")), "spec.scenes[0].templateOverride", "scenes[].templateOverride is only valid with templateId"),
		Entry("Scene: maxSubtitleLines not usable with smart layouts", vsb("{videoName: test, smartLayoutName: Bold, scenes: [{story: Hello, maxSubtitleLines: 2}]}"), "spec.scenes[0].maxSubtitleLines", "maxSubtitleLines cannot be used with a smart layout"),
		Entry("AI storyboard rules: presentation sources are rejected", vsb(aiReq("scenes: [{pptUrl: 'https://example.com/a.pptx'}]")), "spec.scenes[0].pptUrl", "AI storyboard mode does not support presentation (pptUrl) scenes"),
		Entry("AI storyboard rules: audio sources are rejected", vsb(aiReq("scenes: [{audioUrl: 'https://example.com/a.mp3', audioLanguage: en-US, transcript: [{words: [{word: a, start_time: 0, end_time: 1}]}]}]")), "spec.scenes[0].audioUrl", "AI storyboard mode does not support audio (audioUrl) scenes"),
		Entry("AI storyboard rules: video sources are rejected", vsb(aiReq("scenes: [{videoUrl: 'https://example.com/a.mp4', audioLanguage: en-US, transcript: [{words: [{word: a, start_time: 0, end_time: 1}]}]}]")), "spec.scenes[0].videoUrl", "AI storyboard mode does not support video (videoUrl) scenes"),
		Entry("AI storyboard rules: brief mode is a single brief scene", vsb(aiReq("scenes: [{brief: {prompt: A launch video}}, {story: Hello}]")), "spec.scenes[0].brief", "a brief (storyCoPilot) scene must be the only scene"),
		Entry("AI storyboard rules: a storyCoPilot scene is a brief scene too", vsb(aiReq("scenes: [{story: Hello}, {storyCoPilot: {prompt: A launch video}}]")), "spec.scenes[1].storyCoPilot", "a brief (storyCoPilot) scene must be the only scene"),
		Entry("Scene: a B-roll's aiVisual is an AiVisual", vsb(storySceneReq("backgroundBrolls: [{type: image, aiVisual: {model: flux-schnell, videoDuration: 5s}, brollClip: {start: 0, end: 2}}]")), "spec.scenes[0].backgroundBrolls[0].aiVisual.videoDuration", "videoDuration applies to video models only"),
	)

	DescribeTable("accepts valid requests at the edges of the rules",
		func(obj *unstructured.Unstructured) {
			obj.SetNamespace(namespace)
			Expect(k8sClient.Create(ctx, obj)).To(Succeed())
			// Accepted at admission, the request is valid unless the pre-submit check refuses it;
			// the simulator must come to the same verdict.
			expectSimulatorAgrees(obj, len(operatorPresubmit(obj)) == 0)
		},
		Entry("Limits: videoName of exactly 150 allowed characters", vsb("{videoName: 'Q3 review_final-"+longString(134)+"', scenes: [{story: Hello}]}")),
		Entry("Versioning: animatePPT is still accepted (and ignored)", vsb(sceneReq("pptUrl: 'https://example.com/d.pptx', animatePPT: true"))),
		Entry("Versioning: storyCoPilot with videoType is still accepted", vsb(sceneReq("storyCoPilot: {prompt: A launch video, videoType: Marketing}"))),
		Entry("AI storyboard rules: a brief scene without aiStoryboard (legacy story co-pilot)", vsb(sceneReq("brief: {prompt: A launch video}"))),
		Entry("AiVisual: veo3.1_fast with reference images and 8s", vsb(aiVisualReq("video", "model: veo3.1_fast, videoDuration: 8s, referenceImageUrls: ['https://example.com/a.png', 'https://example.com/b.png']"))),
		Entry("AiVisual: an image model with mediaStyle and referenceImageUrl", vsb(aiVisualReq("image", "model: nanobanana-pro, mediaStyle: cartoon, referenceImageUrl: 'https://example.com/a.png'"))),
		Entry("SceneElement: position accepts center", vsb(elementReq("type: text, text: Hi, position: center"))),
		Entry("SceneElement: a rectangle with borderRadius", vsb(elementReq("type: shape, name: rectangle, borderRadius: 8"))),
		Entry("Background: only a searchFilter picks stock media", vsb(backgroundReq("searchFilter: {query: city at night}, type: video"))),
		Entry("TemplateOverride: a scene that only overrides the template", vsb(templateReq("deleteScene: true, sceneId: s-3"))),
		Entry("Background: zoomAndPan false with kenBurnsEffect true", vsb(backgroundReq("visualUrl: 'https://example.com/i.png', settings: {zoomAndPan: false, kenBurnsEffect: true}"))),
		Entry("Background: kenBurnsEffect false on a video", vsb(backgroundReq("visualUrl: 'https://example.com/v.mp4', type: video, settings: {kenBurnsEffect: false, zoomAndPan: true}"))),
		Entry("BackgroundMusic: autoMusic false with musicUrl", vsb(storyReq("backgroundMusic: {enabled: true, autoMusic: false, musicUrl: 'https://example.com/m.mp3'}"))),
		Entry("StoryboardRequest: webhookInput and projectMetadata are free-form objects", vsb(storyReq("webhookInput: {ticket: {id: 42, tags: [a, b]}}, projectMetadata: {owner: team-a}"))),
		Entry("Avatar: scene-level top and left without position", vsb(storySceneReq("avatar: {top: '10%', left: '80', hide: false}"))),
		Entry("Limits: 60 scenes (the document sets no limit)", vsb("{videoName: test, scenes: ["+repeatItems("{story: Hello}", 60)+"]}")),
		Entry("Limits: 5000 scenes (bounded only by the object's size)", vsb("{videoName: test, scenes: ["+repeatItems("{story: Hello}", 5000)+"]}")),
		Entry("Limits: a transcript of 500 sentences (a 45-minute talk)", vsb(sceneReq("audioUrl: 'https://example.com/talk.mp3', audioLanguage: en-US, transcript: ["+repeatItems("{words: [{word: a, start_time: 0, end_time: 1}, {word: b, start_time: 1, end_time: 2}]}", 500)+"]"))),
		Entry("Limits: a sentence of 150 words", vsb(sceneReq("videoUrl: 'https://example.com/a.mp4', audioLanguage: en-US, transcript: [{words: ["+repeatItems("{word: a, start_time: 0, end_time: 1}", 150)+"]}]"))),
		Entry("Scene: transcript end_time before start_time is checked before submitting, not at admission", vsb(sceneReq("videoUrl: 'https://example.com/a.mp4', audioLanguage: en-US, transcript: [{words: [{word: a, start_time: 2, end_time: 1.5}]}]"))),
		Entry("Limits: 1000 backgroundBrolls (bounded only by the object's size)", vsb(storySceneReq("backgroundBrolls: ["+repeatItems("{color: '#000', brollClip: {start: 0, end: 1}}", 1000)+"]"))),
		Entry("Limits: 600 variables", vsb("{videoName: test, templateId: tpl-1, variables: {"+variables(600)+"}}")),
		Entry("BackgroundMusic: the document sets no order on a clip's start and end", vsb(storyReq("backgroundMusic: {enabled: true, clips: [{start: 5, end: 2}]}"))),
		Entry("TemplateOverride: template style rules are checked before submitting, not at admission", vsb(templateReq("subtitles: [{text: a, style: {animations: [{name: fade, type: exit, speed: custom}]}}], layers: [[{style: {fontUrl: 'https://example.com/f.ttf'}}]]"))),
		Entry("AI storyboard rules: a classic storyboard may mix a storyCoPilot scene with story scenes", vsb("{videoName: test, scenes: [{story: Hello}, {storyCoPilot: {prompt: A launch video}}, {story: Bye}]}")),
		Entry("AI storyboard rules: fields of aiStoryboard other than enabled are kept", vsb(aiReq("scenes: [{story: Hello}], aiStoryboard: {enabled: true, layoutStyle: bold, palette: {primary: '#123456'}}"))),
		Entry("Value formats: percentages with and without %, and with decimals", vsb(storyReq("logo: {url: 'https://example.com/l.png', width: '10%'}, voiceOver: {enabled: true, aiVoices: [{speaker: Emma, premiumVoiceSettings: {stability: '50', similarityBoost: '75.5%', style: '0'}}]}"))),
		Entry("Value formats: element top, left and width as percentages", vsb(elementReq("type: image, visualUrl: 'https://example.com/i.png', top: '12.5%', left: '0', width: '100%'"))),
		Entry("Value formats: RGBA and hex colours", vsb("{videoName: test, subtitleStyle: {color: 'rgba(255, 255, 255, 0.8)'}, voiceOver: {enabled: true}, avatar: {avatarId: a-1, borderColor: 'rgba(0,0,0,1)', backgroundColor: 'rgba(10, 20, 30, 0)'}, scenes: [{story: Hello, background: {color: 'rgba(26, 115, 232, 1)', colorOverlay: {color: 'rgb(0, 0, 0)'}}}, {story: Bye, background: {color: '#1a73e8', colorOverlay: {color: '#fff'}}}]}")),
	)

	It("defaults apiKeySecretRef to video-api-key/apiKey and keeps the default in the stored object", func() {
		render := &videov1alpha1.VideoRender{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "defaults"},
			Spec:       videov1alpha1.VideoRenderSpec{ProjectID: new("p-1")},
		}
		Expect(k8sClient.Create(ctx, render)).To(Succeed())
		var got videov1alpha1.VideoRender
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(render), &got)).To(Succeed())
		Expect(got.Spec.APIKeySecretRef).To(Equal(&videov1alpha1.SecretKeyRef{
			Name: videov1alpha1.DefaultAPIKeySecretName,
			Key:  videov1alpha1.DefaultAPIKeySecretKey,
		}))
	})

	It("keeps the fields of aiStoryboard other than enabled and sends them as written", func() {
		obj := vsb(aiReq("scenes: [{story: Hello}], aiStoryboard: {enabled: true, layoutStyle: bold, palette: {primary: '#123456'}}"))
		obj.SetNamespace(namespace)
		Expect(k8sClient.Create(ctx, obj)).To(Succeed())
		var sb videov1alpha1.VideoStoryboard
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), &sb)).To(Succeed())
		Expect(sb.Spec.AIStoryboard).NotTo(BeNil())
		body, err := json.Marshal(sb.Spec.StoryboardRequest)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(body)).To(ContainSubstring(`"aiStoryboard":{"enabled":true,"layoutStyle":"bold","palette":{"primary":"#123456"}}`))
	})

	It("round-trips the service's numbers and JSON names through the typed client", func() {
		sb := &videov1alpha1.VideoStoryboard{}
		obj := vsb(sceneReq("audioUrl: 'https://example.com/a.mp3', audioLanguage: en-US, " +
			"voiceOver: {enabled: true, aiVoices: [{speaker: Emma, speed: 110, amplificationLevel: -0.25}]}, " +
			"transcript: [{speakerId: 2, words: [{word: Hi, start_time: 0.12, end_time: 0.5, is_pause: false, is_filler: true}]}]"))
		obj.SetNamespace(namespace)
		Expect(k8sClient.Create(ctx, obj)).To(Succeed())
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), sb)).To(Succeed())
		s := sb.Spec.Scenes[0]
		Expect(*s.VoiceOver.AIVoices[0].Speed).To(Equal(110.0))
		Expect(*s.VoiceOver.AIVoices[0].AmplificationLevel).To(Equal(-0.25))
		Expect(s.Transcript[0].Words[0]).To(Equal(videov1alpha1.TranscriptWord{
			Word: "Hi", StartTime: 0.12, EndTime: 0.5, IsPause: new(false), IsFiller: new(true),
		}))
		Expect(*s.Transcript[0].SpeakerID).To(BeEquivalentTo(2))
	})
})
