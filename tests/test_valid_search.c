/*
 * test_valid_search.c - acceptance of orrery search on a published Megatron-LM row (the first row of
 * data/validation/megatron_lm_a100_selene.csv: the 1.7B model on 32 A100-80GB, gbs 512): a search
 * over tp, pp and mbs (recompute none or full) of that model, batch and GPU count finds the
 * published configuration (its tp and pp, dp = gpus/(tp*pp)) valid and fitting, and prints its rank.
 * The rank is reported, not asserted. Labelled slow by CMakeLists.txt (a few seconds; many predictions).
 */
#include "check.h"
#include "csv.h"
#include "orrery/search.h"

#include <string.h>

int main(void)
{
    csv t;
    if (csv_load(&t, ORRERY_VALIDATION_DIR "/megatron_lm_a100_selene.csv") < 0) return 1;
    CHECK(strcmp(csv_get(&t, 1, "model"), "1.7B") == 0);
    uint32_t tp = (uint32_t)csv_num(&t, 1, "tp"), pp = (uint32_t)csv_num(&t, 1, "pp"), dp = (uint32_t)csv_num(&t, 1, "dp");
    char gpus[16], gbs[16];
    snprintf(gpus, sizeof gpus, "%u", (uint32_t)csv_num(&t, 1, "gpus"));
    snprintf(gbs, sizeof gbs, "%u", (uint32_t)csv_num(&t, 1, "global_batch_seqs"));
    orr_csv_free(&t);
    char *argv[] = {"--model", "selene-gpt-1.7b", "--gpu", "A100-SXM4-80GB", "--gpus", gpus, "--gbs", gbs,
                    "--recompute", "none,full"};
    orr_search_opts o;
    orr_search_result r;
    orr_err err = {{0}};
    int rc = orr_search_parse(&o, (int)(sizeof argv / sizeof argv[0]), argv, &err);
    if (rc == 0) rc = orr_search_run(&o, &r, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc) return check_done();
    uint32_t rank = 0, found = 0;
    for (uint32_t k = 0; k < r.nranked && !rank; k++) {
        const orr_trial *x = &r.trials[r.ranked[k]];
        if (x->v[ORR_AX_TP] == tp && x->v[ORR_AX_PP] == pp && x->dp == dp) rank = k + 1;
    }
    for (uint32_t i = 0; i < r.ntrials; i++)
        found += r.trials[i].v[ORR_AX_TP] == tp && r.trials[i].v[ORR_AX_PP] == pp;
    CHECK(found > 0);
    CHECK_MSG(rank > 0, "the published configuration tp %u pp %u dp %u does not fit or is not valid", tp, pp, dp);
    printf("published Megatron-LM configuration (1.7B, 32 x A100, tp %u pp %u dp %u): best rank %u of %u fitting "
           "(%u trials, %u simulated)\n", tp, pp, dp, rank, r.nranked, r.ntrials, r.evaluated);
    orr_search_result_free(&r);
    orr_search_opts_free(&o);
    return check_done();
}
