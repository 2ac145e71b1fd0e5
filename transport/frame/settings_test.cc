#include "transport/frame/settings.h"

#include <vector>

#include "gtest/gtest.h"

namespace transport {
namespace {

uint16_t Id(SettingId id) { return static_cast<uint16_t>(id); }

// RFC 9113 section 6.5.2: initial values.
TEST(SettingsTest, DefaultsAreTheRfcInitialValues) {
  Http2Settings s;
  EXPECT_EQ(s.header_table_size, 4096u);
  EXPECT_TRUE(s.enable_push);
  EXPECT_EQ(s.max_concurrent_streams, kSettingUnlimited);
  EXPECT_EQ(s.initial_window_size, 65535u);
  EXPECT_EQ(s.max_frame_size, 16384u);
  EXPECT_EQ(s.max_header_list_size, kSettingUnlimited);
  EXPECT_TRUE(s.DiffFrom().empty());
}

TEST(SettingsTest, EnablePushMustBeZeroOrOne) {
  EXPECT_TRUE(ValidateSetting(Id(SettingId::kEnablePush), 0).ok());
  EXPECT_TRUE(ValidateSetting(Id(SettingId::kEnablePush), 1).ok());
  const Http2Error e = ValidateSetting(Id(SettingId::kEnablePush), 2);
  EXPECT_TRUE(e.is_connection_error());
  EXPECT_EQ(e.code(), Http2ErrorCode::kProtocolError);
}

TEST(SettingsTest, InitialWindowSizeAboveMaxIsFlowControlError) {
  EXPECT_TRUE(
      ValidateSetting(Id(SettingId::kInitialWindowSize), 0x7fffffff).ok());
  const Http2Error e =
      ValidateSetting(Id(SettingId::kInitialWindowSize), 0x80000000);
  EXPECT_TRUE(e.is_connection_error());
  EXPECT_EQ(e.code(), Http2ErrorCode::kFlowControlError);
}

TEST(SettingsTest, MaxFrameSizeRange) {
  EXPECT_TRUE(ValidateSetting(Id(SettingId::kMaxFrameSize), 16384).ok());
  EXPECT_TRUE(ValidateSetting(Id(SettingId::kMaxFrameSize), 16777215).ok());
  EXPECT_EQ(ValidateSetting(Id(SettingId::kMaxFrameSize), 16383).code(),
            Http2ErrorCode::kProtocolError);
  EXPECT_EQ(ValidateSetting(Id(SettingId::kMaxFrameSize), 16777216).code(),
            Http2ErrorCode::kProtocolError);
}

TEST(SettingsTest, OtherAndUnknownValuesAreValid) {
  for (uint32_t v : {0u, 1u, 0xffffffffu}) {
    EXPECT_TRUE(ValidateSetting(Id(SettingId::kHeaderTableSize), v).ok());
    EXPECT_TRUE(ValidateSetting(Id(SettingId::kMaxConcurrentStreams), v).ok());
    EXPECT_TRUE(ValidateSetting(Id(SettingId::kMaxHeaderListSize), v).ok());
    EXPECT_TRUE(ValidateSetting(0, v).ok());
    EXPECT_TRUE(ValidateSetting(0xffff, v).ok());
  }
}

TEST(SettingsTest, InlinePredicateAgreesWithValidateSetting) {
  for (uint16_t id = 0; id <= 10; ++id) {
    for (uint32_t v : {0u, 1u, 2u, 16383u, 16384u, 0xffffffu, 0x1000000u,
                       0x7fffffffu, 0x80000000u, 0xffffffffu}) {
      EXPECT_EQ(IsValidSetting(id, v), ValidateSetting(id, v).ok())
          << id << " " << v;
    }
  }
}

TEST(SettingsTest, ApplyInOrderIgnoringUnknown) {
  Http2Settings s;
  const std::vector<Setting> entries = {
      {SettingId::kHeaderTableSize, 0},
      {SettingId::kEnablePush, 0},
      {SettingId::kMaxConcurrentStreams, 100},
      {SettingId::kInitialWindowSize, 1},
      {Setting(0x99, 5)},
      {SettingId::kMaxFrameSize, 1 << 20},
      {SettingId::kMaxHeaderListSize, 8192},
      {SettingId::kInitialWindowSize, 1 << 20}};
  ASSERT_TRUE(s.ApplyAll(entries).ok());
  EXPECT_EQ(s.header_table_size, 0u);
  EXPECT_FALSE(s.enable_push);
  EXPECT_EQ(s.max_concurrent_streams, 100u);
  EXPECT_EQ(s.initial_window_size, 1u << 20);  // The last value wins.
  EXPECT_EQ(s.max_frame_size, 1u << 20);
  EXPECT_EQ(s.max_header_list_size, 8192u);

  const std::vector<Setting> diff = s.DiffFrom();
  EXPECT_EQ(diff.size(), 6u);
  Http2Settings t;
  ASSERT_TRUE(t.ApplyAll(diff).ok());
  EXPECT_EQ(s, t);
}

TEST(SettingsTest, InvalidValueLeavesSettingUnchanged) {
  Http2Settings s;
  const Http2Error e = s.Apply({SettingId::kMaxFrameSize, 10});
  EXPECT_FALSE(e.ok());
  EXPECT_EQ(s.max_frame_size, 16384u);
}

TEST(SettingsTest, ViewReadsWholeEntries) {
  const uint8_t payload[] = {
      0x00, 0x03, 0x00, 0x00, 0x00, 0x64,   // MAX_CONCURRENT=100
      0xab, 0xcd, 0xff, 0xfe, 0xfd, 0xfc};  // unknown
  const SettingsView view(payload, 2);
  ASSERT_EQ(view.size(), 2u);
  EXPECT_EQ(view[0], Setting(SettingId::kMaxConcurrentStreams, 100));
  EXPECT_EQ(view[1], Setting(0xabcd, 0xfffefdfc));
  EXPECT_EQ(view.ToVector(), (std::vector<Setting>{view[0], view[1]}));
  EXPECT_STREQ(SettingIdName(view[1].id), "UNKNOWN");
  EXPECT_STREQ(SettingIdName(3), "MAX_CONCURRENT_STREAMS");
}

}  // namespace
}  // namespace transport
