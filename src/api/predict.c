/*
 * predict.c - the pipeline behind `orrery predict`: spec -> workload (Megatron generator) ->
 * estimate (compute models fill op durations) -> execute (cluster executor on the analytic network
 * backend) -> result (breakdown, critical path, headline numbers).
 */
#include "orrery/orrery.h"
#include "orrery/estimate.h"

#include <stdio.h>
#include <string.h>

static void config_json(const orr_spec *s, orr_buf *b)
{
    orr_buf_puts(b, "{\"model\": ");
    orr_json_str(b, s->model.name);
    orr_buf_puts(b, ", \"gpu\": ");
    orr_json_str(b, s->gpu.name);
    orr_buf_puts(b, ", \"cluster\": ");
    orr_json_str(b, s->cluster.name);
    orr_buf_printf(b, ", \"gpus\": %u, \"gpus_per_node\": %u, \"tp\": %u, \"pp\": %u, \"dp\": %u, \"vpp\": %u, "
                      "\"sp\": %s, \"mbs\": %u, \"gbs\": %u, \"seq\": %u, \"recompute\": \"%s\", "
                      "\"dist_opt\": %s, \"precision\": \"%s\", \"overlap_grad_reduce\": %s, "
                      "\"overlap_param_gather\": %s, \"tp_comm_overlap\": %s, \"bucket_params\": %.17g, "
                      "\"launch_s\": %.17g, \"symmetry\": %s, \"network\": \"%s\", \"cp\": %u, \"fsdp\": %u, "
                      "\"zero\": %u, \"reshard_after_forward\": %s, \"compile\": %s, \"caching_allocator\": %s",
                   s->gpus, s->cluster.gpus_per_node, s->tp, s->pp, s->dp, s->vpp, s->sp ? "true" : "false", s->mbs,
                   s->gbs, s->seq, orr_recompute_name(s->recompute), s->dist_opt ? "true" : "false",
                   orr_dtype_name(s->precision), s->overlap_grad_reduce ? "true" : "false",
                   s->overlap_param_gather ? "true" : "false", s->tp_comm_overlap ? "true" : "false",
                   s->bucket_params, (double)s->launch_ps / 1e12, s->symmetry ? "true" : "false",
                   orr_net_kind_name(s->net), s->cp, s->fsdp, s->zero, s->reshard_after_forward ? "true" : "false",
                   s->compile ? "true" : "false", s->caching_allocator ? "true" : "false");
    if (s->net == ORR_NET_FLOW || s->net == ORR_NET_PACKET)
        orr_buf_printf(b, ", \"topology\": \"%s\", \"oversub\": %.17g, \"pxn\": %s", orr_topo_kind_name(s->topo.kind),
                       s->topo.oversub, s->pxn ? "true" : "false");
    if (s->net == ORR_NET_PACKET)
        orr_buf_printf(b, ", \"cc\": \"%s\", \"packet_payload_bytes\": %u", orr_cc_key(s->cc), s->packet_payload_bytes);
    orr_buf_puts(b, "}");
}

int orr_predict(const orr_spec *s, orr_prediction *p, orr_err *err)
{
    memset(p, 0, sizeof *p);
    p->w = orr_gen_megatron(s, err);
    if (!p->w) return -1;
    orr_estimate_workload(p->w, &s->gpu);
    orr_net_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gpus = s->gpus;
    cfg.topo = s->topo;
    cfg.pxn = s->pxn;
    cfg.cc = s->cc;
    cfg.packet_payload_bytes = s->packet_payload_bytes;
    orr_exec_opts opts = {.net = s->net, .launch_ps = s->launch_ps, .net_cfg = &cfg,
                          .mem_capacity_bytes = orr_spec_alloc_capacity(s), .mem_caching = s->caching_allocator};
    if (orr_execute(p->w, &s->gpu, &s->cluster, &opts, &p->x, err) < 0) {
        orr_prediction_free(p);
        return -1;
    }
    char par[96];
    int n = snprintf(par, sizeof par, "TP%u PP%u DP%u", s->tp, s->pp, s->dp);
    if (s->vpp > 1 && n > 0 && (size_t)n < sizeof par) n += snprintf(par + n, sizeof par - (size_t)n, " VPP%u", s->vpp);
    if (s->cp > 1 && n > 0 && (size_t)n < sizeof par) n += snprintf(par + n, sizeof par - (size_t)n, " CP%u", s->cp);
    if (s->fsdp && n > 0 && (size_t)n < sizeof par) n += snprintf(par + n, sizeof par - (size_t)n, " FSDP%u", s->fsdp);
    if (s->zero && n > 0 && (size_t)n < sizeof par) snprintf(par + n, sizeof par - (size_t)n, " ZeRO-%u", s->zero);
    snprintf(p->title, sizeof p->title, "%s on %u x %s (%s, mbs %u, gbs %u, seq %u, %s)", s->model.name, s->gpus,
             s->gpu.name, par, s->mbs, s->gbs, s->seq, orr_dtype_name(s->precision));
    config_json(s, &p->config_json);
    p->info.title = p->title;
    p->info.gpu_name = s->gpu.name;
    p->info.peak_flops_per_gpu = s->gpu.peak_flops[s->precision];
    p->info.config_json = p->config_json.s;
    p->info.device_bytes = s->mem_capacity_bytes ? s->mem_capacity_bytes : s->gpu.hbm_bytes;
    p->info.runtime_reserved_bytes = s->gpu.runtime_reserved_bytes;
    p->info.caching_allocator = s->caching_allocator;
    if (orr_result_build(&p->r, p->w, &p->x, &p->info, err) < 0) {
        orr_prediction_free(p);
        return -1;
    }
    return 0;
}

void orr_prediction_free(orr_prediction *p)
{
    orr_result_free(&p->r);
    orr_exec_result_free(&p->x);
    orr_workload_free(p->w);
    orr_buf_free(&p->config_json);
    memset(p, 0, sizeof *p);
}
