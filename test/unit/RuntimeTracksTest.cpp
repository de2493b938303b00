//===- RuntimeTracksTest.cpp - PT-MoE tracks split between processes -----===//
//
// The session options that split a PT-MoE model's tracks between processes
// (tools/afm-run-mpi), and the track count the manifest and the code must
// agree on. The fake model's code ignores the tracks; what the split does
// to the logits is checked end to end (test/e2e/pt-moe-mpi.test).
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

using namespace afm;
using namespace afm::test;

namespace {
void countCalls(void *user, float *, int64_t) { ++*static_cast<int *>(user); }

class RuntimeTracks : public RuntimeTest {
protected:
  /// A fake model whose manifest says `manifestTracks` tracks per block and
  /// whose code says `codeTracks`.
  std::vector<uint8_t> packTracks(uint32_t manifestTracks,
                                  uint64_t codeTracks) {
    FakeModelOptions options;
    manifest::Manifest m = makeFakeManifest(options);
    m.mutable_model()->set_num_tracks(manifestTracks);
    return packAFMB(m, makeFakeWeights(options),
                    withTrackCount(withFacts(fakeCode(),
                                             makeFakeFacts(options)),
                                   codeTracks));
  }

  afm_status create(afm_model *model, int32_t begin, int32_t end,
                    afm_track_allreduce_fn reduce) {
    afm_session_options options = {};
    options.num_threads = 1;
    options.track_begin = begin;
    options.track_end = end;
    options.track_allreduce = reduce;
    options.track_user = &calls;
    afm_session *session = nullptr;
    afm_status status = afm_session_create(model, &options, &session);
    afm_session_free(session);
    return status;
  }

  int calls = 0;
};
} // namespace

TEST_F(RuntimeTracks, TrackCountMustBeTheCodes) {
  EXPECT_AFM_ERROR(load(packTracks(2, 0)), AFM_ERR_FORMAT,
                   "the manifest's model num_tracks (0: no track blocks) is "
                   "2, but the code was compiled for 0");
  EXPECT_AFM_ERROR(load(packTracks(0, 4)), AFM_ERR_FORMAT,
                   "num_tracks (0: no track blocks) is 0, but the code was "
                   "compiled for 4");
  Loaded loaded;
  ASSERT_EQ(load(packTracks(4, 4), &loaded), AFM_OK) << afm_last_error();
  EXPECT_EQ(afm_model_num_tracks(loaded.model), 4);
}

TEST_F(RuntimeTracks, RangesMustBeInsideTheModelsTracks) {
  Loaded loaded;
  ASSERT_EQ(load(packTracks(4, 4), &loaded), AFM_OK) << afm_last_error();
  afm_model *model = loaded.model;
  EXPECT_EQ(create(model, 0, 4, countCalls), AFM_OK) << afm_last_error();
  EXPECT_EQ(create(model, 1, 3, countCalls), AFM_OK) << afm_last_error();
  EXPECT_AFM_ERROR(create(model, 2, 2, countCalls), AFM_ERR_ARGUMENT,
                   "tracks 2..2 are not a non-empty range of the model's 4");
  EXPECT_AFM_ERROR(create(model, -1, 2, countCalls), AFM_ERR_ARGUMENT,
                   "tracks -1..2 are not a non-empty range");
  EXPECT_AFM_ERROR(create(model, 2, 5, countCalls), AFM_ERR_ARGUMENT,
                   "tracks 2..5 are not a non-empty range of the model's 4");
  EXPECT_AFM_ERROR(create(model, 0, 2, nullptr), AFM_ERR_ARGUMENT,
                   "tracks 0..2 without a track_allreduce");
  // The defaults: every track, here.
  EXPECT_EQ(create(model, 0, 0, nullptr), AFM_OK);
  EXPECT_EQ(calls, 0);
}

TEST_F(RuntimeTracks, ModelWithoutTracks) {
  Loaded loaded;
  open(pack(), loaded);
  EXPECT_EQ(afm_model_num_tracks(loaded.model), 0);
  EXPECT_AFM_ERROR(create(loaded.model, 0, 1, countCalls), AFM_ERR_ARGUMENT,
                   "the model has no track blocks to share between "
                   "processes");
}
