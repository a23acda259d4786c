// The quad's graphics pipeline: SPIRV.swift's two shaders, no vertex input (six vertices from
// gl_VertexIndex), a triangle list, viewport and scissor set per frame.
import CVulkan

enum QuadPipeline {
    static func make(_ vk: VkDevice, renderPass: VkRenderPass, layout: VkPipelineLayout) throws -> VkPipeline {
        let vertex = try shaderModule(vk, SPIRV.quadVertex)
        let fragment = try shaderModule(vk, SPIRV.quadFragment)
        defer {
            vkDestroyShaderModule(vk, vertex, nil)
            vkDestroyShaderModule(vk, fragment, nil)
        }
        var stages = [VkPipelineShaderStageCreateInfo](repeating: VkPipelineShaderStageCreateInfo(), count: 2)
        for (i, (stage, module)) in [(VK_SHADER_STAGE_VERTEX_BIT, vertex), (VK_SHADER_STAGE_FRAGMENT_BIT, fragment)].enumerated() {
            stages[i].sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO
            stages[i].stage = stage
            stages[i].module = module
        }
        var vertexInput = VkPipelineVertexInputStateCreateInfo()
        vertexInput.sType = VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO
        var assembly = VkPipelineInputAssemblyStateCreateInfo()
        assembly.sType = VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO
        assembly.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST
        var viewport = VkPipelineViewportStateCreateInfo()
        viewport.sType = VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO
        viewport.viewportCount = 1
        viewport.scissorCount = 1
        var raster = VkPipelineRasterizationStateCreateInfo()
        raster.sType = VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO
        raster.polygonMode = VK_POLYGON_MODE_FILL
        raster.cullMode = VK_CULL_MODE_NONE.rawValue
        raster.frontFace = VK_FRONT_FACE_COUNTER_CLOCKWISE
        raster.lineWidth = 1
        var multisample = VkPipelineMultisampleStateCreateInfo()
        multisample.sType = VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO
        multisample.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT
        var blendAttachment = VkPipelineColorBlendAttachmentState()
        blendAttachment.colorWriteMask =
            VK_COLOR_COMPONENT_R_BIT.rawValue | VK_COLOR_COMPONENT_G_BIT.rawValue | VK_COLOR_COMPONENT_B_BIT.rawValue
            | VK_COLOR_COMPONENT_A_BIT.rawValue
        var dynamicStates = [VK_DYNAMIC_STATE_VIEWPORT, VK_DYNAMIC_STATE_SCISSOR]

        return try "main".withCString { entry in
            stages[0].pName = entry
            stages[1].pName = entry
            return try withUnsafePointer(to: &blendAttachment) { blendAttachment in
                var blend = VkPipelineColorBlendStateCreateInfo()
                blend.sType = VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO
                blend.attachmentCount = 1
                blend.pAttachments = blendAttachment
                return try dynamicStates.withUnsafeMutableBufferPointer { dynamicStates in
                    var dynamic = VkPipelineDynamicStateCreateInfo()
                    dynamic.sType = VK_STRUCTURE_TYPE_PIPELINE_DYNAMIC_STATE_CREATE_INFO
                    dynamic.dynamicStateCount = UInt32(dynamicStates.count)
                    dynamic.pDynamicStates = UnsafePointer(dynamicStates.baseAddress)
                    return try stages.withUnsafeBufferPointer { stages in
                        var info = VkGraphicsPipelineCreateInfo()
                        info.sType = VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO
                        info.stageCount = 2
                        info.pStages = stages.baseAddress
                        info.layout = layout
                        info.renderPass = renderPass
                        info.subpass = 0
                        return try withUnsafePointer(to: &vertexInput) { vertexInput in
                            try withUnsafePointer(to: &assembly) { assembly in
                                try withUnsafePointer(to: &viewport) { viewport in
                                    try withUnsafePointer(to: &raster) { raster in
                                        try withUnsafePointer(to: &multisample) { multisample in
                                            try withUnsafePointer(to: &blend) { blend in
                                                try withUnsafePointer(to: &dynamic) { dynamic in
                                                    info.pVertexInputState = vertexInput
                                                    info.pInputAssemblyState = assembly
                                                    info.pViewportState = viewport
                                                    info.pRasterizationState = raster
                                                    info.pMultisampleState = multisample
                                                    info.pColorBlendState = blend
                                                    info.pDynamicState = dynamic
                                                    var pipeline: VkPipeline?
                                                    try check(
                                                        vkCreateGraphicsPipelines(vk, nil, 1, &info, nil, &pipeline),
                                                        "vkCreateGraphicsPipelines")
                                                    return pipeline!
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    private static func shaderModule(_ vk: VkDevice, _ words: [UInt32]) throws -> VkShaderModule {
        try words.withUnsafeBufferPointer { words in
            var info = VkShaderModuleCreateInfo()
            info.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO
            info.codeSize = words.count * 4
            info.pCode = words.baseAddress
            var module: VkShaderModule?
            try check(vkCreateShaderModule(vk, &info, nil, &module), "vkCreateShaderModule")
            return module!
        }
    }
}
